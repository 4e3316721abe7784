//! `checkout`: the hosted checkout server and its operator commands.
//!
//! ```text
//! checkout serve                                   run the service (a sandbox with no configuration)
//! checkout terminal create <number> <merchant name>
//! checkout terminal activate|deactivate <number>
//! checkout terminal callback-hosts <number> <host>[,<host>...]|--any
//! checkout terminal max-card-attempts <number> <1..10>
//! checkout terminal capture-method <number> automatic|manual
//! checkout terminal rename <number> <merchant name>  the name payers are shown
//! checkout terminal list
//! checkout client create <terminal number>         prints the new client_id and secret once
//! checkout client link <terminal number> <client_id>  binds an OpenID Connect provider's client
//! checkout client activate|deactivate <client_id>
//! checkout client rotate-secret <client_id> [<overlap hours, default 24>]  new secret; old one works meanwhile
//! checkout client list
//! checkout webhook add <terminal number> <url> [<event type>...]   prints the secret once
//! checkout webhook list <terminal number>
//! checkout webhook delete|rotate-secret|enable <terminal number> <endpoint id>
//! checkout webhook deliveries <terminal number> <endpoint id> [<cursor>]  its deliveries log
//! checkout event redeliver <terminal number> <event id>    send an event again
//! checkout guard show|clear <terminal number>      the card-testing guard's state; clear it
//! checkout reversals review [--terminal <number>]  refunds reconciliation left for review
//! checkout reversals recheck <refund id> --processor-id <id>   reads it at the processor again
//! checkout payment find <internalTransactionReferenceNumber>  the session support is quoted
//! checkout mail list [--terminal <number>] [--limit <n>]  the receipt mails of the outbox
//! checkout migrate                                 apply database migrations and exit
//! checkout listen --forward-to <url> [...]         forward the events feed, signed, to a URL
//! checkout trigger <event type> [...]              drive a sandbox session to that event
//! ```

use std::io::Write;
use std::process::ExitCode;

use checkout_server::devtools::{listen, trigger};
use checkout_server::{admin, Application, Settings};

const USAGE: &str = "usage: checkout serve
       checkout terminal create <number> <merchant name>
       checkout terminal activate|deactivate <number>
       checkout terminal callback-hosts <number> <host>[,<host>...]|--any
       checkout terminal max-card-attempts <number> <1..10>
       checkout terminal capture-method <number> automatic|manual
       checkout terminal rename <number> <merchant name>
       checkout terminal list
       checkout client create <terminal number>
       checkout client link <terminal number> <client_id>
       checkout client activate|deactivate <client_id>
       checkout client rotate-secret <client_id> [<overlap hours>]
       checkout client list
       checkout webhook add <terminal number> <url> [<event type>...]
       checkout webhook list <terminal number>
       checkout webhook delete|rotate-secret|enable <terminal number> <endpoint id>
       checkout webhook deliveries <terminal number> <endpoint id> [<cursor>]
       checkout event redeliver <terminal number> <event id>
       checkout guard show|clear <terminal number>
       checkout reversals review [--terminal <number>]
       checkout reversals recheck <refund id> --processor-id <id>
       checkout payment find <internalTransactionReferenceNumber>
       checkout mail list [--terminal <number>] [--limit <n>]
       checkout migrate
       checkout listen --forward-to <url> [--base-url <url>] [--client-id <id>] [--client-secret <secret>] [--from-start] [--cursor-file <file>] [--poll-ms <ms>]
       checkout trigger <event type> [--base-url <url>] [--client-id <id>] [--client-secret <secret>]
settings: CHECKOUT_CONFIG=<file.json>, CHECKOUT__SECTION__FIELD=value, DATABASE_URL (see README)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    checkout_server::telemetry::init();
    let settings = match Settings::load() {
        Ok(s) => s,
        Err(e) => return fail(&format!("configuration error: {e:#}")),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(&format!("cannot start the runtime: {e}")),
    };
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match words.as_slice() {
        [] | ["serve"] => runtime.block_on(serve(settings)),
        ["help" | "--help" | "-h"] => {
            let _ = writeln!(std::io::stdout(), "{USAGE}");
            return ExitCode::SUCCESS;
        }
        ["listen", rest @ ..] => match listen::ListenOptions::parse(rest, &settings) {
            Ok(options) => runtime.block_on(listen::run(options, &mut std::io::stdout().lock())),
            Err(e) => return fail(&format!("{e:#}\nusage: {}", listen::USAGE)),
        },
        ["trigger", rest @ ..] => match trigger::TriggerOptions::parse(rest, &settings) {
            Ok(options) => runtime.block_on(trigger::run(options, &mut std::io::stdout().lock())),
            Err(e) => return fail(&format!("{e:#}\nusage: {}", trigger::USAGE)),
        },
        rest => match admin::Command::parse(rest) {
            Ok(command) => runtime.block_on(admin::run(&settings, command)),
            Err(message) => return fail(&format!("{message}\n{USAGE}")),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&format!("error: {e:#}")),
    }
}

async fn serve(settings: Settings) -> anyhow::Result<()> {
    let app = Application::build(settings).await?;
    app.print_banner();
    app.run_until_stopped().await
}

fn fail(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "{message}");
    ExitCode::from(2)
}
