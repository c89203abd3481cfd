//! `kura index`.

/// `kura index`: one progress bar per domain on stderr, figures on stdout.
pub(super) fn run(app: &crate::app::App, full: bool, project: Option<&str>) -> Result<(), String> {
    use indicatif::{ProgressBar, ProgressStyle};
    let bar = std::sync::Mutex::new(None::<(&'static str, ProgressBar)>);
    let style =
        ProgressStyle::with_template("{prefix:>6} [{bar:40}] {pos}/{len} files ({elapsed})")
            .map_err(|e| e.to_string())?
            .progress_chars("=> ");
    let progress = |domain: &'static str, done: u64, total: u64| {
        let mut bar = bar.lock().unwrap_or_else(|e| e.into_inner());
        if bar.as_ref().is_none_or(|(d, _)| *d != domain) {
            if let Some((_, old)) = bar.take() {
                old.finish();
            }
            let b = ProgressBar::new(total).with_style(style.clone());
            b.set_prefix(domain);
            *bar = Some((domain, b));
        }
        if let Some((_, b)) = bar.as_ref() {
            b.set_length(total);
            b.set_position(done);
        }
    };
    let lines = app
        .index_now(full, project, &progress)
        .map_err(|e| format!("{}: {}", e.code.as_str(), e.message))?;
    if let Some((_, b)) = bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
        b.finish();
    }
    if lines.is_empty() {
        return Err(
            "nothing to index: no root is configured (--vibe-root, --vault-root, --manuals-root)"
                .into(),
        );
    }
    for l in lines {
        println!("{l}");
    }
    Ok(())
}
