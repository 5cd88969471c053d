//! The binary: parse the command line, set up tracing (to stderr, `RUST_LOG` to tune), run the
//! command, and map errors to exit codes. Nothing else lives here.

use thirdshift_reconciler::cli::{self, app};
use thirdshift_reconciler::exit;

fn main() {
    // First, while this is the only thread: no process of the user can read our memory or
    // /proc environment, and no child inherits a credential unless handed it.
    thirdshift_reconciler::host::not_dumpable();
    thirdshift_reconciler::github::take_from_env();
    let cli = match cli::manual::parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() && cli::is_run(std::env::args().skip(1)) => {
            let _ = e.print();
            std::process::exit(exit::run::USAGE);
        }
        Err(e) => e.exit(),
    };
    if cli.globals.quiet {
        thirdshift_reconciler::snapshot::quiet();
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                // octocrab logs each failed request at ERROR in its own words; every failure
                // is reported once by this tool instead, naming the URL (`RUST_LOG` shows them)
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(log_filter(&cli.globals))),
        )
        .init();
    let mirror = cli::workflow::mirror_stdout();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: starting the async runtime: {e}");
            std::process::exit(exit::ERROR);
        }
    };
    let code = match runtime.block_on(app::dispatch(cli)) {
        Ok(code) => code,
        Err(err) => {
            let code = exit::code_of(&err);
            let message = thirdshift_reconciler::text::for_terminal(&format!("{err:#}"));
            eprintln!("thirdshift-reconciler: {message}");
            use thirdshift_reconciler::cli::workflow::{annotate, Level};
            annotate(Level::Error, &message);
            code
        }
    };
    drop(runtime);
    if let Some(mirror) = mirror {
        let args: Vec<String> = std::env::args().skip(1).collect();
        mirror.finish(&format!("thirdshift-reconciler {}", args.join(" ")));
    }
    std::process::exit(code);
}

/// The log filter `-v`, `-vv` and `-q` ask for (`RUST_LOG`, when set, is used instead).
fn log_filter(g: &cli::Globals) -> &'static str {
    match (g.quiet, g.verbose) {
        (true, _) => "error,octocrab=off",
        (false, 0) => "warn,octocrab=off",
        (false, 1) => "warn,thirdshift_reconciler=info,octocrab=off",
        (false, _) => "info,thirdshift_reconciler=debug",
    }
}
