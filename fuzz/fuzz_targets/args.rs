//! Tool argument reading: any JSON object, every accessor, never a panic.
#![no_main]

use kura::args::Args;
use kura::scan::ScanStart;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_slice(data) else {
        return;
    };
    let args = Args::new(Some(&map));
    for key in map
        .keys()
        .map(String::as_str)
        .chain(["query", "path", "cursor", "start_line"])
    {
        let _ = args.str(key);
        let _ = args.text(key);
        let _ = args.query(key);
        let _ = args.bool(key);
        let _ = args.int(key, 1);
        let _ = args.int_lenient(key, 0);
        let _ = args.str_list(key);
        if let Ok(Some(o)) = args.obj(key) {
            let _ = o.int("start_line", 1);
            let _ = o.int("char_offset", 0);
        }
    }
    let _ = ScanStart::from_args_with(&args, true);
    let _ = ScanStart::from_args(&args);
});
