// hearth-stt behind hearth's Stt actor, for the benches that recognise a scene's speech as
// `hearth run` does: whisper tiny.en from the model directory, the wake words and the
// checkout's tools' words as its prompt, and (for a request) the house's phrase set made from
// those tools, the stop words and the answers. `benches/wake` checks detections with it (open
// transcripts), `benches/answers` hears answers to a question (held to the set).

use std::sync::Arc;

use hearth::stt::{PhraseSource, Stt, SttConfig, SttMsg, SttServer};
use hearth::tools::{Registry, ToolsActor, ToolsMsg};
use hearth::voice::{Heard, Hold, Utterance};
use ractor::{Actor, ActorRef};

/// A running `hearth-stt` behind hearth's Stt actor.
pub struct Ears {
    rt: tokio::runtime::Runtime,
    stt: ActorRef<SttMsg>,
    /// The tools actor the phrase set is made from, when the set is used.
    tools: Option<ActorRef<ToolsMsg>>,
    /// Words in whisper's prompt.
    pub prompt_words: usize,
}

impl Ears {
    /// `hearth-stt` beside this build's `hearth`, told to expect `wake_phrases` (empty: not
    /// told) and the words of the checkout's tools; with `house`, holding requests to the
    /// house's phrase set (the wake words allowed before one), as `hearth run` does.
    pub fn start(wake_phrases: &[String], house: bool) -> Result<Ears, String> {
        let program = crate::hearth_exe().with_file_name("hearth-stt");
        if !program.is_file() {
            return Err(format!(
                "{} is not built: cargo build --release -p hearth-stt",
                program.display()
            ));
        }
        let model = hearth::models::model_dir()
            .map_err(|e| e.to_string())?
            .join("ggml-tiny.en.bin");
        if !model.is_file() {
            return Err(format!(
                "{} is missing: run scripts/fetch-models",
                model.display()
            ));
        }
        let dir = crate::root().join("tools");
        let registry =
            Registry::load_dir(&dir).map_err(|e| format!("the tools in {}: {e}", dir.display()))?;
        let words = hearth::phrases::expected_words(wake_phrases, &registry);
        let prompt_words = words.split(", ").filter(|w| !w.is_empty()).count();
        let mut config = SttConfig::new(SttServer::Spawn {
            program,
            model,
            args: vec!["--prompt".into(), words],
        });
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| format!("a runtime for the recogniser: {e}"))?;
        let tools = match house {
            true => {
                let (tools, _) = rt
                    .block_on(Actor::spawn(None, ToolsActor, Arc::new(registry)))
                    .map_err(|e| format!("starting the tools actor: {e}"))?;
                config.phrases = Some(PhraseSource {
                    tools: tools.clone(),
                    fixed: hearth::conductor::stop::STOP_PHRASES,
                    lead: wake_phrases.to_vec(),
                    expect: true,
                });
                Some(tools)
            }
            false => None,
        };
        let (stt, _) = rt
            .block_on(Actor::spawn(None, Stt, config))
            .map_err(|e| format!("starting hearth-stt: {e}"))?;
        Ok(Ears {
            rt,
            stt,
            tools,
            prompt_words,
        })
    }

    /// What `samples` (16 kHz) say, held to the house's phrase set or open.
    pub fn hear(&self, samples: &[f32], hold: Hold) -> Result<Heard, String> {
        let u = Utterance::whole(samples.to_vec());
        self.rt
            .block_on(hearth::stt::transcribe_as(&self.stt, u, hold))
            .map_err(|e| format!("recognising: {e}"))
    }
}

impl Drop for Ears {
    fn drop(&mut self) {
        self.stt.stop(None);
        if let Some(tools) = &self.tools {
            tools.stop(None);
        }
    }
}
