//! Closed sets of the wire (states, brands, event types) as enums that keep a value this
//! version does not know in `Other`, so that a newer service never breaks an older SDK.

/// Declares a string enum: its known variants with their wire names, and `Other(String)`.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $wire:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// A value this version of the SDK does not know, as the service wrote it.
            Other(String),
        }

        impl $name {
            /// Every value this version knows, as the service writes it.
            pub const KNOWN: &'static [&'static str] = &[$($wire),*];

            /// The value as the service writes it.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $wire, )*
                    $name::Other(other) => other,
                }
            }

            /// The value the service writes as `text` (`Other` when it is not known).
            pub fn parse(text: &str) -> $name {
                match text {
                    $( $wire => $name::$variant, )*
                    other => $name::Other(other.to_owned()),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl From<&str> for $name {
            fn from(text: &str) -> $name {
                $name::parse(text)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<$name, D::Error> {
                let text = String::deserialize(deserializer)?;
                Ok($name::parse(&text))
            }
        }
    };
}

pub(crate) use wire_enum;
