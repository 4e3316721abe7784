//! Columns of a combined statement, each declared once.
//!
//! The combined statements (`session_insert`, `attempt_writes`) carry many rows as one array
//! per column and turn them back into rows with `unnest(...) AS u (col, ...)`. Written by
//! hand, a column's name appears in the alias list, the INSERT list, the SELECT list, the
//! struct of vectors, the push and the bind, and the binds must follow the alias list by
//! position with nothing to check it. [`unnest_columns!`] declares each column once, with
//! its SQL type and its Rust type, and derives from that one line:
//!
//! - the row struct (one value per column, named as the column),
//! - the columns struct (one vector per column) and its `push` of a row,
//! - `bind`, which pushes the vectors as array parameters in declaration order,
//! - `NAMES`, the column names in the same order, from which [`list`] and [`assignments`]
//!   write the statement's column lists.
//!
//! The statement texts are written once per process from `NAMES` (a `LazyLock<String>`), so
//! each statement's text never changes and diesel still caches it as one prepared statement
//! under its static query id.

/// The text every combined statement starts with, before its first array.
pub(crate) const WITH_UNNEST: &str = "WITH u AS (SELECT * FROM unnest(";

/// Declares a row struct and its columns struct (see the module doc). Each column is
/// `name: SqlType => RustType`; the SQL type is the element type of the array parameter.
macro_rules! unnest_columns {
    (
        $(#[$row_meta:meta])*
        $vis:vis struct $row:ident $(<$lt:lifetime>)?;
        $(#[$cols_meta:meta])*
        struct $cols:ident {
            $( $field:ident : $sql:ty => $ty:ty ),+ $(,)?
        }
    ) => {
        $(#[$row_meta])*
        $vis struct $row $(<$lt>)? {
            $(
                #[doc = concat!("The `", stringify!($field), "` column.")]
                pub $field: $ty,
            )+
        }

        $(#[$cols_meta])*
        #[derive(Default)]
        $vis struct $cols $(<$lt>)? {
            $( $field: Vec<$ty>, )+
        }

        impl $(<$lt>)? $cols $(<$lt>)? {
            /// The column names, in the order of [`Self::bind`].
            pub(crate) const NAMES: &'static [&'static str] = &[$(stringify!($field)),+];

            /// Appends one row.
            pub(crate) fn push(&mut self, row: $row $(<$lt>)?) {
                $( self.$field.push(row.$field); )+
            }

            /// Pushes one array parameter per column, comma-separated, in the order of
            /// [`Self::NAMES`].
            pub(crate) fn bind<'b>(
                &'b self,
                out: &mut diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
            ) -> diesel::QueryResult<()> {
                let mut first = true;
                $(
                    if !std::mem::take(&mut first) {
                        out.push_sql(", ");
                    }
                    out.push_bind_param::<diesel::sql_types::Array<$sql>, _>(&self.$field)?;
                )+
                Ok(())
            }
        }
    };
}

pub(crate) use unnest_columns;

/// `names` as a column list: `a, b, c`.
pub(crate) fn list(names: &[&str]) -> String {
    names.join(", ")
}

/// `names` as `UPDATE ... SET` assignments from the `unnest` alias `u`, leaving out `keys`:
/// `a = u.a, b = u.b`.
pub(crate) fn assignments(names: &[&str], keys: &[&str]) -> String {
    names
        .iter()
        .filter(|n| !keys.contains(n))
        .map(|n| format!("{n} = u.{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn lists_and_assignments_follow_the_names() {
        assert_eq!(list(&["id", "state"]), "id, state");
        assert_eq!(
            assignments(&["id", "state", "checks"], &["id"]),
            "state = u.state, checks = u.checks"
        );
    }

    /// The plans PostgreSQL made for the statements prepared on `conn` whose text holds `part`:
    /// one `(generic_plans, custom_plans)` per prepared statement.
    pub(crate) async fn plans_of(
        conn: &diesel_async::AsyncPgConnection,
        part: &str,
    ) -> Vec<(i64, i64)> {
        use diesel::sql_types::{BigInt, Text};
        use diesel_async::RunQueryDsl;

        #[derive(diesel::QueryableByName)]
        struct Plans {
            #[diesel(sql_type = BigInt)]
            generic_plans: i64,
            #[diesel(sql_type = BigInt)]
            custom_plans: i64,
        }
        let mut c = conn;
        let rows: Vec<Plans> = diesel::sql_query(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements \
             WHERE strpos(statement, $1) > 0",
        )
        .bind::<Text, _>(part)
        .load(&mut c)
        .await
        .expect("reading pg_prepared_statements");
        rows.into_iter()
            .map(|p| (p.generic_plans, p.custom_plans))
            .collect()
    }
}
