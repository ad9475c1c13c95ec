//! `hearth phrases`: the house's phrase set, what the loaded tools' local intents
//! understand: how many sentences, the forms with their slots' words, or a sample.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use hearth::{Flags, Settings};

#[derive(clap::Args)]
pub struct Args {
    /// The configuration file (default: $HEARTH_CONFIG, else hearth.toml in
    /// $CONFIGURATION_DIRECTORY, ~/.config/hearth or /etc/hearth, if there is one).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Directory of tool manifests (*.toml). Default: $HEARTH_TOOLS, else ./tools if present.
    #[arg(long)]
    tools: Option<PathBuf>,
    /// Print every sentence form, its slots as the words they take.
    #[arg(long)]
    forms: bool,
    /// Print N sentences drawn from the set, each with its tool.
    #[arg(long, value_name = "N")]
    sample: Option<usize>,
    /// Print the set as the grammar hearth sends its recogniser (JSON), and nothing else.
    #[arg(long, conflicts_with_all = ["forms", "sample"])]
    grammar: bool,
    /// The draw's seed: the same seed draws the same sentences.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// The counts per tool and in all; the forms and a sample when asked for.
pub fn run(args: Args) -> Result<ExitCode> {
    let settings = Settings::discover(Flags {
        config: args.config.clone(),
        tools: args.tools.clone(),
        ..Flags::default()
    })?;
    // what `hearth run` sends its recogniser: its timer and control tools included
    let registry = super::offered(&settings)?;
    // and the house's tools, as `hearth run` offers them once it has read the house
    let (house, mqtt) = settings.house()?;
    let registry = if house.is_some() || mqtt.is_some() {
        super::runtime()?.block_on(hearth::supervisor::offered_with_house(
            registry, house, mqtt,
        ))?
    } else {
        Arc::new(registry)
    };
    let stop = hearth::conductor::stop::STOP_PHRASES;
    let set = hearth::phrases::house_phrases(&registry, stop);
    let mut out = std::io::stdout().lock();
    if args.grammar {
        serde_json::to_writer(&mut out, &set.grammar())?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut tools: Vec<(&str, bool)> = set
        .forms()
        .iter()
        .map(|f| (f.source.as_str(), f.follow_up))
        .collect();
    tools.sort_by_key(|&(_, follow_up)| follow_up); // stable: each kind in the tools' order
    tools.dedup();
    for (tool, follow_up) in tools {
        let forms: Vec<_> = set
            .forms()
            .iter()
            .filter(|f| f.source == tool && f.follow_up == follow_up)
            .collect();
        let counted: u128 = forms.iter().filter_map(|f| f.sentences()).sum();
        let open = forms.iter().filter(|f| f.sentences().is_none()).count();
        let kind = if follow_up { " follow-ups" } else { "" };
        write!(
            out,
            "{tool}{kind}: {} forms, {counted} sentences",
            forms.len()
        )?;
        if open > 0 {
            write!(out, " (and {open} forms that take any words or number)")?;
        }
        writeln!(out)?;
    }
    let all = set.count();
    writeln!(
        out,
        "in all: {} forms, {} sentences, {} forms open",
        set.forms().len(),
        all.sentences,
        all.open_forms
    )?;
    if args.forms {
        writeln!(out)?;
        for form in set.forms() {
            let kind = if form.follow_up { " (follow-up)" } else { "" };
            writeln!(out, "{}{kind}\t{form}", form.source)?;
        }
    }
    if let Some(n) = args.sample {
        writeln!(out)?;
        for (tool, sentence) in set.sample(n, args.seed) {
            writeln!(out, "{tool}\t{sentence}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
