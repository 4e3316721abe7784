//! Finding the PostgreSQL server programs: `initdb`, `pg_ctl` and `postgres`.

use std::fmt;
use std::path::{Path, PathBuf};

/// The Debian package that provides the server programs.
pub const DEBIAN_PACKAGE: &str = "postgresql";

/// The programs a cluster needs, all from one folder.
const PROGRAMS: [&str; 3] = ["initdb", "pg_ctl", "postgres"];

/// No folder searched holds the PostgreSQL server programs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct BinariesNotFound {
    /// The folders searched, in order.
    pub searched: Vec<PathBuf>,
}

impl fmt::Display for BinariesNotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the PostgreSQL server programs (initdb, pg_ctl, postgres) were not found"
        )?;
        if self.searched.is_empty() {
            write!(f, " (no folder to search)")?;
        } else {
            let dirs: Vec<String> = self
                .searched
                .iter()
                .map(|d| d.display().to_string())
                .collect();
            write!(f, " in {}", dirs.join(", "))?;
        }
        write!(
            f,
            "; install the Debian package `{DEBIAN_PACKAGE}` (apt-get install {DEBIAN_PACKAGE}) \
             or put the folder that holds them on PATH"
        )
    }
}

/// Where the PostgreSQL server programs are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgBinaries {
    dir: PathBuf,
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn has_programs(dir: &Path) -> bool {
    PROGRAMS.iter().all(|p| is_executable(&dir.join(p)))
}

/// Orders version folder names (`15`, `9.6`) from highest to lowest.
fn version_key(name: &str) -> Vec<u32> {
    name.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}

impl PgBinaries {
    /// Finds the programs in [`PgBinaries::search_dirs`].
    pub fn find() -> Result<PgBinaries, BinariesNotFound> {
        Self::find_in(&Self::search_dirs())
    }

    /// The folders [`PgBinaries::find`] searches, in order: each folder of `PATH`, then
    /// `/usr/lib/postgresql/<version>/bin`, highest version first (Debian's layout).
    pub fn search_dirs() -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        let mut versions: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|e| {
                        let name = e.file_name().to_string_lossy().into_owned();
                        (version_key(&name), e.path().join("bin"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        versions.sort_by(|a, b| b.0.cmp(&a.0));
        dirs.extend(versions.into_iter().map(|(_, dir)| dir));
        dirs
    }

    /// Finds the first of `dirs` that holds `initdb`, `pg_ctl` and `postgres`. A folder of
    /// symbolic links (such as `/usr/local/bin`) resolves to the folder they point into, so
    /// that `pg_ctl` finds its `postgres`.
    pub fn find_in(dirs: &[PathBuf]) -> Result<PgBinaries, BinariesNotFound> {
        for dir in dirs {
            if !has_programs(dir) {
                continue;
            }
            let resolved = std::fs::canonicalize(dir.join("initdb"))
                .ok()
                .and_then(|p| p.parent().map(Path::to_path_buf))
                .filter(|d| has_programs(d));
            return Ok(PgBinaries {
                dir: resolved.unwrap_or_else(|| dir.clone()),
            });
        }
        Err(BinariesNotFound {
            searched: dirs.to_vec(),
        })
    }

    /// The folder holding the programs.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The path of one program of that folder.
    pub(crate) fn program(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_numerically() {
        let mut names = vec!["9.6", "15", "10", "16"];
        names.sort_by_key(|n| std::cmp::Reverse(version_key(n)));
        assert_eq!(names, ["16", "15", "10", "9.6"]);
    }
}
