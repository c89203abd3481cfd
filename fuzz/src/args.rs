//! Tool inputs as clients send them: any JSON object read as every tool's
//! derived input type. Never a panic; a refusal is one of kura's codes and
//! names a parameter of that tool (or none).

use kura::args::Args;

pub fn run(data: &[u8]) {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_slice(data) else {
        return;
    };
    for tool in kura::tools::all() {
        if let Err(e) = tool.read_input(Args::new(Some(&map))) {
            let json = e.to_json();
            let code = json["error"]["code"].as_str().expect("an error code");
            assert!(
                !code.is_empty() && code != "internal",
                "{}: {json}",
                tool.name
            );
        }
    }
}
