//! Runs the README's curl walk-through, as written, against a running sandbox.

use std::process::Command;

use crate::support::TestServer;

const README: &str = include_str!("../../../../README.md");

/// The shell block between the walk-through markers of the README.
fn walkthrough_script() -> String {
    let start = README
        .find("<!-- walkthrough:start -->")
        .expect("the README has a walk-through start marker");
    let end = README
        .find("<!-- walkthrough:end -->")
        .expect("the README has a walk-through end marker");
    let block = &README[start..end];
    let body_start = block.find("```sh\n").expect("a ```sh block") + "```sh\n".len();
    let body_end = block[body_start..].find("```").expect("the block ends") + body_start;
    block[body_start..body_end].to_owned()
}

#[tokio::test]
async fn the_readme_walkthrough_works_against_the_sandbox() {
    let server = TestServer::sandbox("walkthrough").await;
    let script = walkthrough_script();
    let output = tokio::task::spawn_blocking({
        let base = server.base.clone();
        let id = server.client_id.clone();
        let secret = server.client_secret.clone();
        move || {
            Command::new("bash")
                .arg("-euo")
                .arg("pipefail")
                .arg("-c")
                .arg(&script)
                .env("BASE", base)
                .env("CLIENT_ID", id)
                .env("CLIENT_SECRET", secret)
                .output()
                .expect("bash runs")
        }
    })
    .await
    .expect("join");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "walk-through failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("\"checkoutSessionId\""), "{stdout}");
    assert!(stdout.contains("\"paymentLink\""), "{stdout}");
    assert!(stdout.contains("\"state\":\"Pending\""), "{stdout}");
}
