//! The private-cluster launcher.

use std::path::PathBuf;

use checkout_pg_cluster::{LocalCluster, PgBinaries, DEBIAN_PACKAGE};
use diesel::sql_types::Text;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};

#[derive(diesel::QueryableByName)]
struct Setting {
    #[diesel(sql_type = Text)]
    value: String,
}

async fn setting(url: &str, name: &str) -> String {
    let mut conn = AsyncPgConnection::establish(url).await.unwrap();
    let row: Setting = diesel::sql_query("SELECT current_setting($1) AS value")
        .bind::<Text, _>(name)
        .get_result(&mut conn)
        .await
        .unwrap();
    row.value
}

#[test]
fn missing_binaries_are_reported_with_the_package_to_install() {
    let err = PgBinaries::find_in(&[]).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("initdb, pg_ctl, postgres"), "{message}");
    assert!(message.contains("apt-get install postgresql"), "{message}");
    assert_eq!(DEBIAN_PACKAGE, "postgresql");

    let empty = PathBuf::from("/nonexistent/bin");
    let err = PgBinaries::find_in(&[empty.clone(), PathBuf::from("/")]).unwrap_err();
    assert_eq!(err.searched, [empty, PathBuf::from("/")]);
    assert!(err.to_string().contains("/nonexistent/bin"), "{err}");
}

#[test]
fn the_binaries_are_found_where_debian_puts_them() {
    let found = PgBinaries::find().unwrap();
    for program in ["initdb", "pg_ctl", "postgres"] {
        assert!(
            found.dir().join(program).is_file(),
            "{program} in {}",
            found.dir().display()
        );
    }
    assert!(PgBinaries::search_dirs()
        .iter()
        .any(|d| d.starts_with("/usr/lib/postgresql")));
}

#[tokio::test]
async fn an_ephemeral_cluster_serves_on_its_socket_and_vanishes_on_drop() {
    let cluster = tokio::task::spawn_blocking(LocalCluster::ephemeral)
        .await
        .unwrap()
        .unwrap();
    assert!(cluster.was_started());
    let url = cluster.url();
    assert!(
        url.starts_with("postgres://postgres@/postgres?host=/"),
        "{url}"
    );
    assert!(cluster.socket_dir().join(".s.PGSQL.5432").exists());
    assert_eq!(setting(&url, "fsync").await, "off");
    assert_eq!(setting(&url, "synchronous_commit").await, "off");
    assert_eq!(setting(&url, "full_page_writes").await, "off");
    assert_eq!(setting(&url, "listen_addresses").await, "");

    let folder = cluster.socket_dir().to_path_buf();
    tokio::task::spawn_blocking(move || drop(cluster))
        .await
        .unwrap();
    assert!(!folder.exists());
    assert!(AsyncPgConnection::establish(&url).await.is_err());
}

#[tokio::test]
async fn a_persistent_cluster_keeps_its_data_between_runs() {
    let dir = PathBuf::from(format!("/tmp/hc-test-persist-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let open = || {
        let dir = dir.clone();
        tokio::task::spawn_blocking(move || LocalCluster::persistent(dir))
    };

    let first = open().await.unwrap().unwrap();
    assert!(first.was_started());
    let url = first.url();
    assert_eq!(setting(&url, "fsync").await, "on");
    let mut conn = AsyncPgConnection::establish(&url).await.unwrap();
    conn.batch_execute("CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')")
        .await
        .unwrap();
    drop(conn);

    // A second handle finds it running, and leaves it running when dropped.
    let second = open().await.unwrap().unwrap();
    assert!(!second.was_started());
    assert_eq!(second.url(), url);
    tokio::task::spawn_blocking(move || drop(second))
        .await
        .unwrap();
    assert_eq!(setting(&url, "fsync").await, "on");

    // The handle that started it stops it.
    tokio::task::spawn_blocking(move || drop(first))
        .await
        .unwrap();
    assert!(AsyncPgConnection::establish(&url).await.is_err());

    let again = open().await.unwrap().unwrap();
    assert!(again.was_started());
    let mut conn = AsyncPgConnection::establish(&again.url()).await.unwrap();
    let row: Setting = diesel::sql_query("SELECT v AS value FROM kept")
        .get_result(&mut conn)
        .await
        .unwrap();
    assert_eq!(row.value, "still here");
    drop(conn);
    tokio::task::spawn_blocking(move || again.stop())
        .await
        .unwrap()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn as_root_a_data_folder_the_postgres_user_cannot_reach_is_refused_clearly() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(1)
        != 0
    {
        eprintln!("not root: the programs run as this user, who owns the folder");
        return;
    }
    let locked = PathBuf::from(format!("/tmp/hc-test-locked-{}", std::process::id()));
    std::fs::create_dir_all(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
    let err = LocalCluster::persistent(locked.join("pg")).unwrap_err();
    std::fs::remove_dir_all(&locked).unwrap();
    let message = format!("{err:#}");
    assert!(message.contains("cannot reach"), "{message}");
    assert!(message.contains(&locked.display().to_string()), "{message}");
}
