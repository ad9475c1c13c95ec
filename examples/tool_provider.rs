//! A tool provider: a program that offers hearth a tool over D-Bus and runs it when called.
//!
//! ```sh
//! cargo run --example tool_provider            # on the session bus
//! cargo run --example tool_provider -- --system
//! ```
//!
//! It serves `io.hearth.ToolProvider1` at `/io/hearth/ToolProvider`, registers
//! `get_weather` with hearth (`io.hearth.Agent1.RegisterTool`), then answers each
//! `Call(name, arguments_json)` and prints it. hearth drops the tool when this program
//! leaves the bus. Set `DBUS_SESSION_BUS_ADDRESS` to use a private bus.

use std::io::Write;

use zbus::connection::Builder;

struct Provider;

#[zbus::interface(name = "io.hearth.ToolProvider1")]
impl Provider {
    /// Run one call of a registered tool; the reply is the tool's output text.
    async fn call(&self, name: String, arguments_json: String) -> zbus::fdo::Result<String> {
        println!("call {name} {arguments_json}");
        let _ = std::io::stdout().flush();
        let args: serde_json::Value = serde_json::from_str(&arguments_json)
            .map_err(|e| zbus::fdo::Error::InvalidArgs(format!("arguments_json: {e}")))?;
        match name.as_str() {
            "get_weather" => {
                let city = args["city"].as_str().unwrap_or("here");
                Ok(format!("Sunny and 21 degrees in {city}."))
            }
            other => Err(zbus::fdo::Error::UnknownMethod(format!(
                "this provider has no tool {other:?}"
            ))),
        }
    }
}

const SPEC: &str = r#"{
  "name": "get_weather",
  "description": "Get the weather in a city.",
  "parameters": {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": false
  }
}"#;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let system = std::env::args().any(|a| a == "--system");
    let builder = if system {
        Builder::system()
    } else {
        Builder::session()
    };
    let conn = builder
        .serve_at("/io/hearth/ToolProvider", Provider)
        .build()
        .await?;
    conn.call_method(
        Some("io.hearth.Agent1"),
        "/io/hearth/Agent",
        Some("io.hearth.Agent1"),
        "RegisterTool",
        &(SPEC,),
    )
    .await?;
    println!(
        "registered get_weather as {}",
        conn.unique_name().map(|n| n.as_str()).unwrap_or("?")
    );
    let _ = std::io::stdout().flush();
    // serve until killed
    std::future::pending::<()>().await;
    Ok(())
}
