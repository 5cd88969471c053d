//! Running the Action's own steps the way a runner does, against the emulator: `action.yml` is
//! read, every `run:` step's script is run by `bash --noprofile --norc -eo pipefail` with the
//! step's `env:` evaluated from the inputs, `github.*`, `runner.*` and earlier steps' outputs
//! (`$GITHUB_OUTPUT`), and the one `uses:` step (actions/cache) is played as a cache hit holding
//! the binary under test. An expression it does not know fails the test rather than guessing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use yaml_serde::Value;

use super::{World, BOT_TOKEN};

pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// One step as the runner ran it: its name, exit code and output.
#[derive(Debug)]
pub struct StepRun {
    pub name: String,
    pub code: Option<i32>,
    pub stdout: String,
    /// Read only through `Debug`, in a failed assertion's message.
    #[allow(dead_code)]
    pub stderr: String,
}

/// What one use of the Action left behind.
#[derive(Debug)]
pub struct ActionRun {
    pub steps: Vec<StepRun>,
    pub summary: String,
    /// The Action's `outputs:`, evaluated as the runner does after its last step.
    pub outputs: BTreeMap<String, String>,
}

impl ActionRun {
    /// The step named `name`.
    pub fn step(&self, name: &str) -> &StepRun {
        let found = self.steps.iter().find(|s| s.name == name);
        found.unwrap_or_else(|| panic!("no step {name:?} in {:#?}", self.steps))
    }
}

/// A runner for the Action: its home, workspace and temp folder (where the binary is restored).
/// Numbers the traced steps' files.
static TRACED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

pub struct Runner<'w> {
    pub world: &'w World,
    pub home: PathBuf,
    pub workspace: PathBuf,
    /// The state folder the host's Runs use (`THIRDSHIFT_STATE_DIR`).
    pub state_dir: PathBuf,
    pub event: Option<PathBuf>,
    /// Whether actions/cache restores the binary (else the install step finds none).
    pub cache_hit: bool,
    /// What a cache hit restores: the binary under test unless set (a cache an agent rewrote).
    pub cached: Option<PathBuf>,
    /// A folder put first on the steps' `PATH` (a stand-in for a tool).
    pub path_first: Option<PathBuf>,
    /// When set, every step runs under `strace -f`, each `execve` (arguments and environment)
    /// written to `<this>.<step number>`.
    pub trace: Option<PathBuf>,
    /// Where the Action is (`GITHUB_ACTION_PATH`): this repository, or a workflow's checkout.
    pub action_path: PathBuf,
}

impl<'w> Runner<'w> {
    pub fn new(world: &'w World, host: &str) -> Runner<'w> {
        let root = world.dir.path().join(format!("runner-{host}"));
        let (home, workspace) = (root.join("home"), root.join("workspace"));
        for dir in [&home, &workspace, &root.join("temp")] {
            std::fs::create_dir_all(dir).expect("runner folders");
        }
        Runner {
            world,
            home,
            workspace,
            state_dir: world.state_dir(host),
            event: None,
            cache_hit: true,
            cached: None,
            path_first: None,
            trace: None,
            action_path: PathBuf::from(ROOT),
        }
    }

    /// The job's temp folder (`RUNNER_TEMP`).
    pub fn temp(&self) -> PathBuf {
        self.home.parent().expect("runner root").join("temp")
    }

    /// Runs every step of `action.yml` with `inputs`, as the runner would.
    pub async fn run_action(&self, inputs: &[(&str, &str)]) -> ActionRun {
        let action = load(self.action_path.join("action.yml"));
        let mut ctx = self.context(&action, inputs);
        let summary = self.temp().join("summary.md");
        let _ = std::fs::remove_file(&summary);
        let mut steps = Vec::new();
        for (i, step) in seq(&action["runs"]["steps"]).iter().enumerate() {
            let name = step["name"].as_str().unwrap_or("unnamed").to_string();
            if let Some(uses) = step["uses"].as_str() {
                self.play_uses(uses, step, &ctx);
                continue;
            }
            let output = self.temp().join(format!("output-{i}"));
            std::fs::write(&output, "").expect("output file");
            let run = self.run_step(step, &ctx, &output, &summary).await;
            if let Some(id) = step["id"].as_str() {
                for (k, v) in read_outputs(&output) {
                    ctx.insert(format!("steps.{id}.outputs.{k}"), v);
                }
            }
            let failed = run.code != Some(0);
            steps.push(StepRun { name, ..run });
            if failed {
                break;
            }
        }
        let summary = std::fs::read_to_string(&summary).unwrap_or_default();
        let mut outputs = BTreeMap::new();
        for (name, spec) in action["outputs"].as_mapping().cloned().unwrap_or_default() {
            let value = spec["value"].as_str().unwrap_or("");
            let known = |e: &str| ctx.contains_key(e);
            // an output of a step that did not run is empty, as on a runner
            let expr = value
                .trim_start_matches("${{")
                .trim_end_matches("}}")
                .trim();
            let v = if known(expr) {
                evaluate(value, &ctx)
            } else {
                String::new()
            };
            outputs.insert(name.as_str().unwrap_or("").to_string(), v);
        }
        ActionRun {
            steps,
            summary,
            outputs,
        }
    }

    /// The expression context: inputs (given, else their defaults), `github.*` and `runner.*`.
    fn context(&self, action: &Value, inputs: &[(&str, &str)]) -> BTreeMap<String, String> {
        let mut ctx = BTreeMap::from([
            (
                "github.action_path".to_string(),
                self.action_path.display().to_string(),
            ),
            ("github.token".to_string(), BOT_TOKEN.to_string()),
            // a local action (`uses: ./`) has no action repository
            ("github.action_repository".to_string(), String::new()),
            ("runner.os".to_string(), "Linux".to_string()),
            ("runner.arch".to_string(), "X64".to_string()),
        ]);
        let declared = action["inputs"].as_mapping().expect("inputs");
        for (name, spec) in declared {
            let name = name.as_str().expect("input name");
            let default = spec["default"].as_str().unwrap_or("");
            let default = evaluate(default, &ctx);
            ctx.insert(format!("inputs.{name}"), default);
        }
        for (name, value) in inputs {
            let key = format!("inputs.{name}");
            assert!(ctx.contains_key(&key), "action.yml has no input {name:?}");
            ctx.insert(key, value.to_string());
        }
        ctx
    }

    /// actions/cache, played as a hit: the binary under test (or `cached`) is what it restores.
    fn play_uses(&self, uses: &str, step: &Value, ctx: &BTreeMap<String, String>) {
        assert!(
            uses.starts_with("actions/cache@"),
            "the test runner knows only actions/cache, not {uses}"
        );
        let dir = PathBuf::from(evaluate(step["with"]["path"].as_str().expect("path"), ctx));
        assert!(
            dir.starts_with(self.temp()),
            "the binary is restored into the job's RUNNER_TEMP, never a folder an agent could \
             write between jobs: {}",
            dir.display()
        );
        if !self.cache_hit {
            return;
        }
        std::fs::create_dir_all(&dir).expect("cache folder");
        let cached = self.cached.clone();
        let from = cached.unwrap_or_else(|| env!("CARGO_BIN_EXE_thirdshift-reconciler").into());
        std::fs::copy(from, dir.join("thirdshift-reconciler")).expect("restore the binary");
    }

    async fn run_step(
        &self,
        step: &Value,
        ctx: &BTreeMap<String, String>,
        output: &Path,
        summary: &Path,
    ) -> StepRun {
        assert_eq!(
            step["shell"].as_str(),
            Some("bash"),
            "every run step says its shell"
        );
        let script = step["run"].as_str().expect("run");
        assert!(!script.contains("${{"), "no expression inside a shell line");
        let file = self.temp().join("step.sh");
        std::fs::write(&file, script).expect("script");
        let mut cmd = match &self.trace {
            Some(trace) => {
                let n = TRACED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut c = tokio::process::Command::new("strace");
                c.args(["-f", "-qq", "-v", "-s", "65536", "-e", "trace=execve", "-o"])
                    .arg(trace.with_extension(n.to_string()))
                    .args(["--", "bash"]);
                c
            }
            None => tokio::process::Command::new("bash"),
        };
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&file)
            .current_dir(&self.workspace)
            .env_clear()
            .envs(self.runner_env(output, summary));
        if let Some(env) = step["env"].as_mapping() {
            for (k, v) in env {
                let value = v.as_str().map(|v| evaluate(v, ctx)).unwrap_or_default();
                cmd.env(k.as_str().expect("env name"), value);
            }
        }
        let out = cmd.output().await.expect("bash runs");
        StepRun {
            name: String::new(),
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// What a runner puts in every step's environment, pointed at the emulator.
    fn runner_env(&self, output: &Path, summary: &Path) -> Vec<(String, String)> {
        let world = self.world;
        let event = self.event.as_ref().map(|p| p.display().to_string());
        let path = std::env::var("PATH").unwrap_or_default();
        let path = match &self.path_first {
            Some(first) => format!("{}:{path}", first.display()),
            None => path,
        };
        let pairs = [
            ("PATH", path),
            ("HOME", self.home.display().to_string()),
            ("CI", "true".into()),
            ("GITHUB_ACTIONS", "true".into()),
            ("GITHUB_ACTION_PATH", self.action_path.display().to_string()),
            ("GITHUB_WORKSPACE", self.workspace.display().to_string()),
            ("GITHUB_REPOSITORY", world.sim.repo_full_name()),
            ("GITHUB_API_URL", world.server.url.clone()),
            ("GITHUB_OUTPUT", output.display().to_string()),
            ("GITHUB_STEP_SUMMARY", summary.display().to_string()),
            ("GITHUB_EVENT_PATH", event.unwrap_or_default()),
            ("RUNNER_TEMP", self.temp().display().to_string()),
            ("RUNNER_OS", "Linux".into()),
            ("RUNNER_ARCH", "X64".into()),
            ("THIRDSHIFT_STATE_DIR", self.state_dir.display().to_string()),
            ("THIRDSHIFT_RETRY_BASE_MS", "5".into()),
            ("RUST_LOG", "warn".into()),
        ];
        pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }
}

/// A YAML file of the repository.
pub fn load(path: PathBuf) -> Value {
    let text = std::fs::read_to_string(&path).expect("readable");
    yaml_serde::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn seq(v: &Value) -> Vec<Value> {
    v.as_sequence().cloned().unwrap_or_default()
}

/// `text` with every `${{ expr }}` replaced by its value in `ctx`; panics on an unknown one.
pub fn evaluate(text: &str, ctx: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").expect("closed expression") + start;
        let expr = rest[start + 3..end].trim();
        let value = ctx.get(expr);
        out.push_str(value.unwrap_or_else(|| panic!("unknown expression {expr:?}")));
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// `key=value` lines of a `$GITHUB_OUTPUT` file.
fn read_outputs(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let pairs = text.lines().filter_map(|l| l.split_once('='));
    pairs.map(|(k, v)| (k.to_string(), v.to_string())).collect()
}
