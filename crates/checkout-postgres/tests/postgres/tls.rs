//! TLS to the database with `sslmode=verify-full` semantics: a PostgreSQL on loopback serving
//! a certificate of a test CA made here with the `openssl` program. The right CA and host
//! connect over TLS (the migrations and the pool alike); another CA, or a host name the
//! certificate does not name, is refused before anything is sent.

use std::path::{Path, PathBuf};
use std::process::Command;

use checkout_pg_cluster::LocalCluster;
use checkout_postgres::{establish, run_migrations, with_ca_file, PgStore};
use diesel::sql_types::Bool;
use diesel_async::RunQueryDsl;

/// Runs `openssl` with `args` in `dir`.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the openssl program (Debian package openssl)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA `<name>-ca.pem` (and its key) in `dir`.
fn make_ca(dir: &Path, name: &str) -> PathBuf {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &format!("{name}-ca.key"),
            "-out",
            &format!("{name}-ca.pem"),
            "-days",
            "2",
            "-subj",
            &format!("/CN={name} test CA"),
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
    );
    dir.join(format!("{name}-ca.pem"))
}

/// A server certificate for DNS name `localhost` only, signed by the CA `ca`; (cert, key).
fn make_server_cert(dir: &Path, ca: &str) -> (Vec<u8>, Vec<u8>) {
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=localhost",
        ],
    );
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n\
         keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            &format!("{ca}-ca.pem"),
            "-CAkey",
            &format!("{ca}-ca.key"),
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        ],
    );
    (
        std::fs::read(dir.join("server.crt")).unwrap(),
        std::fs::read(dir.join("server.key")).unwrap(),
    )
}

#[derive(diesel::QueryableByName)]
struct Ssl {
    #[diesel(sql_type = Bool)]
    ssl: bool,
}

#[tokio::test(flavor = "multi_thread")]
async fn the_database_is_reached_over_verified_tls_and_impostors_are_refused() {
    let dir = std::env::temp_dir().join(format!("hc-tls-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let right_ca = make_ca(&dir, "right");
    let wrong_ca = make_ca(&dir, "wrong");
    let (cert, key) = make_server_cert(&dir, "right");
    let cluster = tokio::task::spawn_blocking(move || LocalCluster::ephemeral_tls(&cert, &key))
        .await
        .unwrap()
        .expect("a PostgreSQL with TLS");
    let port = cluster.port();
    let url = |host: &str| format!("postgres://postgres@{host}:{port}/postgres");

    // The right CA and the certificate's host name: a TLS connection.
    let good = with_ca_file(&url("localhost"), &right_ca);
    let mut conn = establish(&good).await.expect("a verified TLS connection");
    let row: Ssl = diesel::sql_query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        .get_result(&mut conn)
        .await
        .unwrap();
    assert!(row.ssl, "the connection is encrypted");
    // The libpq spelling in the URL itself works too, for the migrations and the pool.
    let in_url = format!(
        "{}?sslmode=verify-full&sslrootcert={}",
        url("localhost"),
        right_ca.display()
    );
    run_migrations(&in_url).await.expect("migrations over TLS");
    let store = PgStore::connect(&in_url, 2).await.unwrap();
    assert!(store.list_terminals().await.unwrap().is_empty());

    // Another CA: the server is not trusted.
    let err = establish(&with_ca_file(&url("localhost"), &wrong_ca))
        .await
        .err()
        .expect("a server of another CA is refused");
    assert!(err.to_string().contains("UnknownIssuer"), "{err}");
    // The right CA, but a host the certificate does not name.
    let err = establish(&with_ca_file(&url("127.0.0.1"), &right_ca))
        .await
        .err()
        .expect("a certificate for another host is refused");
    assert!(err.to_string().contains("not valid for name"), "{err}");
    // And the server takes no plain TCP connection at all.
    assert!(establish(&url("localhost")).await.is_err());

    drop(store);
    drop(cluster);
    std::fs::remove_dir_all(&dir).unwrap();
}
