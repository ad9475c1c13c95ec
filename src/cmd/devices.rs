//! `hearth devices`: every tool hearth would offer, where it comes from (a manifest, a
//! built-in, Home Assistant), the things it reaches with their names, aliases and rooms, and
//! three things one can say to it; then what was found and left out, and why.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use hearth::tools::{Executor, Tool};
use hearth::{Flags, Registry, Settings};

#[derive(clap::Args)]
pub struct Args {
    /// The configuration file (default: $HEARTH_CONFIG, else hearth.toml in
    /// $CONFIGURATION_DIRECTORY, ~/.config/hearth or /etc/hearth, if there is one).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Directory of tool manifests (*.toml). Default: $HEARTH_TOOLS, else ./tools if present.
    #[arg(long)]
    tools: Option<PathBuf>,
}

/// How many sentences are drawn per tool to find three it understands.
const DRAWN: usize = 60;

/// List the tools and the things; exit 1 when Home Assistant is configured and cannot be read.
pub fn run(args: Args) -> Result<ExitCode> {
    let settings = Settings::discover(Flags {
        config: args.config.clone(),
        tools: args.tools.clone(),
        ..Flags::default()
    })?;
    let registry = super::offered(&settings)?;
    let (watch, mqtt) = settings.house()?;
    let mut out = std::io::stdout().lock();
    let mut code = ExitCode::SUCCESS;
    let rt = super::runtime()?;
    // Home Assistant read here too, for what it left out (and to fail when it cannot be read)
    let found = match &watch {
        None => None,
        Some(w) => match rt.block_on(hearth::house::read_once(w)) {
            Ok(found) => Some(found),
            Err(e) => {
                writeln!(out, "Home Assistant: {e}\n")?;
                code = ExitCode::FAILURE;
                None
            }
        },
    };
    let registry = rt.block_on(hearth::supervisor::offered_with_house(
        registry,
        found.is_some().then_some(watch.clone()).flatten(),
        mqtt,
    ))?;
    let set = hearth::phrases::house_phrases(&registry, &[]);
    for tool in registry.tools() {
        write_tool(&mut out, &registry, &set, tool)?;
    }
    if let Some(found) = found {
        writeln!(
            out,
            "Home Assistant at {}: {} things found, {} areas",
            watch.as_ref().map(|w| w.url.as_str()).unwrap_or_default(),
            found.things.len(),
            found.areas.len()
        )?;
        for left in &found.left {
            writeln!(out, "  left out {}: {}", left.entity_id, left.reason)?;
        }
    }
    Ok(code)
}

fn write_tool(
    out: &mut impl Write,
    registry: &Registry,
    set: &hearth::intent::PhraseSet,
    tool: &Tool,
) -> Result<()> {
    let name = &tool.spec.name;
    writeln!(out, "{name} ({})", tool.source())?;
    if let Executor::House(spec) = &tool.executor {
        for thing in spec.things.iter() {
            let mut said = thing.name.clone();
            if !thing.aliases.is_empty() {
                said.push_str(&format!(" ({})", thing.aliases.join(", ")));
            }
            if let Some(area) = &thing.area {
                said.push_str(&format!(" in the {}", area.name));
            }
            writeln!(out, "  {said}\t{}", thing.id)?;
        }
    }
    let names: Vec<&str> = match &tool.executor {
        Executor::House(spec) => spec.things.iter().flat_map(|t| t.words()).collect(),
        _ => Vec::new(),
    };
    let says = three_sentences(registry, set, name, &names);
    if !says.is_empty() {
        writeln!(out, "  say: {}", says.join(" · "))?;
    }
    Ok(())
}

/// Three short requests drawn from the tool's forms that its intents turn into its call,
/// those that say one of `names` first.
fn three_sentences(
    registry: &Registry,
    set: &hearth::intent::PhraseSet,
    tool: &str,
    names: &[&str],
) -> Vec<String> {
    let forms: Vec<_> = set
        .forms()
        .iter()
        .filter(|f| f.source == tool)
        .cloned()
        .collect();
    let mut drawn: Vec<String> = hearth::intent::PhraseSet::new(forms)
        .sample(DRAWN, 7)
        .into_iter()
        .map(|(_, s)| s)
        .filter(|s| !s.contains('…'))
        .filter(|s| {
            registry
                .intents()
                .recognize(s)
                .is_some_and(|calls| calls.iter().all(|c| c.tool == tool))
        })
        .collect();
    drawn.sort_by(|a, b| {
        let key = |s: &String| (!names.iter().any(|n| s.contains(n)), s.len());
        key(a).cmp(&key(b)).then(a.cmp(b))
    });
    drawn.dedup();
    drawn
        .into_iter()
        .take(3)
        .map(|s| format!("\"{s}\""))
        .collect()
}
