//! The whisper model, loaded once, and one transcription at a time on it.
//!
//! Settings for short voice commands: greedy decoding without temperature fallback (predictable
//! time), no timestamps, one segment, no context carried between utterances (one client's words
//! never prime the next transcript), an optional initial prompt (e.g. the room and device names
//! of the house), and the encoder's `audio_ctx` trimmed to the utterance: whisper.cpp's encoder
//! otherwise always runs over a 30 s window (1500 frames, 50 per second), so a 2 s command pays
//! for 30 s.
//!
//! The trimmed window needs a margin of silence after the speech: with too little, whisper does
//! not see the audio end and repeats the sentence until the token cap ("turn on the kitchen
//! light, turn on the kitchen light, ..."; seen on the fixtures with margins of 0–64 frames;
//! 128 transcribed them all without a prompt; with an initial prompt of the house's words,
//! 128 looped on kitchen.wav and alexa.wav, 256 transcribed every fixture, in 0.14–0.26 s
//! on 2 cores; but with the pre-roll and pause `hearth run` puts around a command, kitchen.wav
//! looped at every margin up to 384). When a transcript still looks like such a loop (it
//! reached the token cap, a four-word phrase comes three times, or a phrase comes twice in a
//! row), there are two ways out. If decoding ran to the token cap and the whole transcript is
//! one phrase said over and over from its first word (every such loop seen on the fixtures:
//! whisper heard the command, then started it again, more times than the audio could hold),
//! that phrase is the transcript: no second decode ([`Transcription::collapsed`]). Such a loop
//! does not run to the cap any more: [`crate::loop_guard`] ends the decode as soon as the
//! phrase is begun again with more words than the audio could hold, and it is cut the same
//! way ([`Ended::Loop`]). A loop of a
//! single word is whisper stuck on the first word instead, and like every other case the
//! utterance is decoded again with twice the window, then with the full window: each costs
//! more, but only then.
//!
//! The loop does not always run to the cap: after the command, whisper weighs the end of the
//! text against starting the command again about evenly (tiny.en, the trimmed window and the
//! house's words as prompt: the end at p ≈ 0.4, the restart at p ≈ 0.5), and when it restarts
//! it often ends after the second pass: "What time is it? What time is it?", "Thank you.
//! Thank you.", in 18 of 288 short synthesised commands (8 commands, 3 paces, with and
//! without room noise), none of them with the full window. The text alone cannot tell that
//! from a speaker who said it twice, so a transcript that repeats a phrase back to back
//! ([`repeats_back_to_back`]) is never cut: it is decoded again with a wider window, whose
//! transcript stands (`tests/repetition.rs`: the commands whisper heard twice are heard once,
//! and "thank you, thank you" twice). It stands as the open transcript: with a phrase set, the
//! phrase pass weighs it against the set's requests even when it is one of them, since the
//! wider window's greedy path may be another request ("cancel timer," for "Cancel all
//! timers.", see `Recognizer::phrase_pass`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tracing::warn;
use whisper_rs::{
    FullParams, SamplingStrategy, WhisperContext, WhisperContextParameters, WhisperError,
    WhisperState,
};

use hearth_phrases::Matcher;

use crate::audio::WHISPER_RATE;
use crate::loop_guard::{phrase_of, plain_word, LoopGuard};
use crate::phrase_pass::{self, Vocab};
use crate::weighing::{verdict, way_contrast, Primed, Verdict, Weighed};

/// Encoder frames per second of audio (1500 for whisper's 30 s window).
pub const AUDIO_CTX_PER_SECOND: usize = 50;

/// Default encoder frames added to the utterance's own when trimming `audio_ctx` (5.12 s).
pub const DEFAULT_AUDIO_CTX_MARGIN: usize = 256;

/// Default [`RecognizerConfig::phrase_margin`], in nats. Measured on 157 espeak-ng clips (two
/// voices; the demo home's requests, sentences drawn from its phrase set, and 10 questions
/// and remarks that sound like commands): the closest a question came to being taken as a
/// command was 2.03 nats ("Can I unlock the back door?" → "Can you lock the back door?"), and
/// 11 of the 15 phrases taken at 1.5 were what was said, the other 4 the same request in
/// other words ("lights" for "light"); 2 more were left because they added a way-deciding
/// word ([`hearth_phrases::Matcher::introduces`]).
pub const DEFAULT_PHRASE_MARGIN: f32 = 1.5;

/// Default [`RecognizerConfig::mend_margin`], in nats. Measured on the session bench's
/// spoken runs (the daily, demo and household sets; Piper and flite voices; the search let
/// down to 12 nats to see every phrase within reach): the phrases that mended a word or two
/// of a request came 0.6–3.2 nats below the open transcript ("is in the pasta timer" →
/// "resume the pasta timer" 2.1, "but the living room light at 40%" → "put …" 2.9, "Are
/// there any time or running?" → "Are there any timers running?" 3.2), and the closest a
/// question came to a request in one or two words was 4.1 ("Did you lock the back door?" →
/// "Could you lock the back door?"). Phrases that drop more words (a two-part request cut to
/// its first part, 3.5) or rewrite a remark (5.5 and more) are left by [`MEND_WORDS`].
pub const DEFAULT_MEND_MARGIN: f32 = 3.5;

/// Default [`RecognizerConfig::way_contrast`], in nats: a phrase that chooses a way the open
/// transcript did not say ("post the garage door" → "Close the garage door,") is taken only
/// when the audio makes it this much likelier than the same phrase with each other way in its
/// place ("Open the garage door,"): e³ ≈ 20 times as likely.
pub const DEFAULT_WAY_CONTRAST: f32 = 3.0;

/// Default [`RecognizerConfig::ask_margin`], in nats: a mend of at most [`NEAR_WORDS`] words
/// this far below the open transcript is not taken but offered as [`PhrasePass::near`], for
/// the asker to put as a question. Measured on the house set's spoken sessions (Home
/// Assistant's demo house, flite slt; the margin let down to 12 nats): "turn on the ceiling
/// pan" → "turn on the ceiling fan," 3.98 below, "New the bedroom" → "mute the bedroom." 5.31
/// (its way 8.93 likelier than "unmute"); Piper: "Let's get this song on the walkman." →
/// "skip the song on the walkman." 4.72; the next mend of a request, "put the e-cobian cold
/// mode," → "put the ecobee in cool mode," (three words), 7.85; a question mended to a request
/// came 4.1 below ([`DEFAULT_MEND_MARGIN`]), which the asker leaves alone (it asks nothing
/// about a transcript that asks to know something).
pub const DEFAULT_ASK_MARGIN: f32 = 6.0;

/// Most words a mend may take out of the open transcript, and most it may put in.
pub const MEND_WORDS: usize = 2;

/// The same for a near phrase ([`PhrasePass::near`]), which is only asked about: "Let's get
/// this song on the walkman." → "skip the song on the walkman." (three out, two in).
pub const NEAR_WORDS: usize = 3;

/// Default [`RecognizerConfig::phrase_budget`]: decoder steps per utterance (5–15 ms each
/// on 2 cores with tiny.en, so at most about 0.3–0.9 s, spent only on a transcript outside
/// the set; a remark is left in 2–12 steps, the phrase's likelihood falling below the floor).
pub const DEFAULT_PHRASE_BUDGET: usize = 60;

/// Default [`RecognizerConfig::phrase_beam`]. With 2, a mend of a request's first words was
/// lost at its first token ("Set it past a timer" → "Set a pasta timer", 2.4 nats below,
/// found with 4 in 38 steps).
pub const DEFAULT_PHRASE_BEAM: usize = 4;

/// The first four bytes of a whisper.cpp ggml model ("ggml" as a little-endian u32).
const GGML_MAGIC: [u8; 4] = *b"lmgg";

/// How to fix a model that cannot be used.
const MODEL_FIX: &str = "pass --model with the path of a whisper.cpp ggml model file such as \
ggml-tiny.en.bin (hearth's test model is in ../shared/models/ beside the checkout; others are at \
https://huggingface.co/ggerganov/whisper.cpp)";

/// Why the model could not be loaded. Every message names the file and the fix.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// No file at the path.
    #[error("whisper model {}: no such file; {MODEL_FIX}", path.display())]
    Missing {
        /// The path given.
        path: PathBuf,
    },
    /// The file exists but cannot be read.
    #[error("whisper model {}: cannot read it ({source}); check its permissions, or {MODEL_FIX}", path.display())]
    Unreadable {
        /// The path given.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a ggml whisper model.
    #[error("whisper model {}: not a whisper.cpp ggml model (it does not start with the ggml magic); {MODEL_FIX}", path.display())]
    NotGgml {
        /// The path given.
        path: PathBuf,
    },
    /// whisper.cpp refused the file.
    #[error("whisper model {}: whisper.cpp could not load it ({source}); the file may be truncated or of another format; {MODEL_FIX}", path.display())]
    Whisper {
        /// The path given.
        path: PathBuf,
        /// whisper-rs's error.
        source: WhisperError,
    },
    /// The default language is not one the model knows.
    #[error("language `{language}`: {problem}")]
    Language {
        /// The language asked for.
        language: String,
        /// Why it cannot be used.
        problem: String,
    },
}

/// Why one transcription failed.
#[derive(Debug, thiserror::Error)]
pub enum TranscribeError {
    /// The language asked for cannot be used with this model.
    #[error("language `{language}`: {problem}")]
    Language {
        /// The language asked for.
        language: String,
        /// Why it cannot be used.
        problem: String,
    },
    /// whisper.cpp failed.
    #[error("whisper.cpp failed: {0}")]
    Whisper(#[from] WhisperError),
}

/// Settings fixed at start-up.
#[derive(Debug, Clone)]
pub struct RecognizerConfig {
    /// CPU threads for whisper.cpp.
    pub threads: usize,
    /// The language used when a request names none (`en`, or `auto` for detection on a
    /// multilingual model).
    pub language: String,
    /// Text to prime the decoder with (names of rooms and devices, spelling of names).
    pub prompt: Option<String>,
    /// Trim the encoder's `audio_ctx` to the utterance (`false`: always the full 30 s window).
    pub trim_audio_ctx: bool,
    /// Encoder frames added to the utterance's own when trimming (50 per second).
    pub audio_ctx_margin: usize,
    /// How much less likely (in nats of log-likelihood) than the open transcript the phrase
    /// set's likeliest request may be and still be taken (see [`crate::phrase_pass`]).
    pub phrase_margin: f32,
    /// The same for a phrase that only mends the open transcript: at most [`MEND_WORDS`] of
    /// its words out, and as many in ([`phrase_pass::mended_words`]). Below `phrase_margin`,
    /// it changes nothing.
    pub mend_margin: f32,
    /// How much likelier (nats) a phrase that chooses a way the open transcript did not
    /// say must be than the same phrase with each other way in its place
    /// ([`hearth_phrases::Matcher::choice`]); `f32::INFINITY`: never taken.
    pub way_contrast: f32,
    /// How far below the open transcript a mend may be and still be offered as
    /// [`PhrasePass::near`] (never taken); at most `mend_margin`: none offered.
    pub ask_margin: f32,
    /// Decoder steps the phrase pass may take per utterance.
    pub phrase_budget: usize,
    /// Sequences the phrase pass's beam holds.
    pub phrase_beam: usize,
}

impl Default for RecognizerConfig {
    fn default() -> Self {
        RecognizerConfig {
            threads: default_threads(),
            language: "en".into(),
            prompt: None,
            trim_audio_ctx: true,
            audio_ctx_margin: DEFAULT_AUDIO_CTX_MARGIN,
            phrase_margin: DEFAULT_PHRASE_MARGIN,
            mend_margin: DEFAULT_MEND_MARGIN,
            way_contrast: DEFAULT_WAY_CONTRAST,
            ask_margin: DEFAULT_ASK_MARGIN,
            phrase_budget: DEFAULT_PHRASE_BUDGET,
            phrase_beam: DEFAULT_PHRASE_BEAM,
        }
    }
}

/// All cores, at most 8 (whisper.cpp gains little beyond that for small models).
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(4)
        .min(8)
}

/// The transcript the phrase pass weighs: its text, the tokens that spell it, and whether it
/// comes from a wider window after the trimmed one looped.
struct Open<'a> {
    text: &'a str,
    tokens: &'a [(i32, f32)],
    retried: bool,
}

/// What came out of one transcription.
#[derive(Debug, Clone)]
pub struct Transcription {
    /// The recognised text, trimmed.
    pub text: String,
    /// The language used.
    pub language: String,
    /// Seconds of audio.
    pub audio_seconds: f64,
    /// The encoder window used, in frames (1500 = the full 30 s).
    pub audio_ctx: usize,
    /// Time whisper.cpp took (every run, if it ran more than once).
    pub elapsed: Duration,
    /// The threads it was decoded on (fewer than configured when other programs kept cores
    /// busy).
    pub threads: usize,
    /// True if the trimmed window's transcript looked like a repetition loop and the utterance
    /// was decoded again with a wider window (`audio_ctx` is the last one used).
    pub retried: bool,
    /// True if decoding ran to the token cap (or the loop guard ended it), the transcript was
    /// one phrase repeated from its start, and it was cut to that phrase (see
    /// [`repeated_phrase`], [`Ended::Loop`]).
    pub collapsed: bool,
    /// The phrase pass, when the request named a phrase set.
    pub phrase: Option<PhrasePass>,
}

/// What the phrase pass found (see [`crate::phrase_pass`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PhrasePass {
    /// The open decode's transcript.
    pub open: String,
    /// The set's likeliest request, if the search found one; the open transcript itself when
    /// it is a request of the set and nothing likelier was found.
    pub phrase: Option<String>,
    /// The open transcript's log-likelihood (nats; with its end of text when it was a
    /// request of the set weighed after a loop; 0 when it was not scored).
    pub open_logprob: f32,
    /// The phrase's (nats).
    pub phrase_logprob: f32,
    /// When the phrase chooses a way the open transcript did not say: how much likelier
    /// (nats) the audio makes it than with the likeliest other way in its place.
    pub way_contrast: Option<f32>,
    /// Whether the transcript is the phrase: the open one was in the set, or the phrase was
    /// at most the margin less likely.
    pub taken: bool,
    /// Whether the phrase, not taken, mends the open transcript closely enough to be asked
    /// about (within the ask margin; see `RecognizerConfig::ask_margin`).
    pub near: bool,
    /// Decoder steps taken.
    pub steps: usize,
    /// Time the pass took.
    pub elapsed: Duration,
}

/// A loaded whisper model with its working state.
pub struct Recognizer {
    // `state` holds a reference-counted handle to the model: the context field keeps the API
    // for creating more states, documents ownership, and is asked about the vocabulary.
    context: WhisperContext,
    state: WhisperState,
    config: RecognizerConfig,
    model_path: PathBuf,
    model_type: String,
    multilingual: bool,
    model_audio_ctx: usize,
    vocab: Vocab,
    /// The last prompt fitted to the decoder, and its tokens ([`Recognizer::prompt_tokens`]).
    fitted: Option<(String, Vec<i32>)>,
    /// The threads the utterance being transcribed is decoded on (`hearth_cores::threads`).
    threads: usize,
}

impl std::fmt::Debug for Recognizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recognizer")
            .field("model_path", &self.model_path)
            .field("model_type", &self.model_type)
            .field("multilingual", &self.multilingual)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Checks that `path` is a readable file that starts like a ggml model, before whisper.cpp
/// (which only logs why it fails) sees it.
pub fn check_model_file(path: &Path) -> Result<(), LoadError> {
    use std::io::Read;
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(LoadError::Missing { path: path.into() })
        }
        Err(source) => {
            return Err(LoadError::Unreadable {
                path: path.into(),
                source,
            })
        }
    };
    let mut magic = [0u8; 4];
    match file.read_exact(&mut magic) {
        Ok(()) if magic == GGML_MAGIC => Ok(()),
        Ok(()) => Err(LoadError::NotGgml { path: path.into() }),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            Err(LoadError::NotGgml { path: path.into() })
        }
        Err(source) => Err(LoadError::Unreadable {
            path: path.into(),
            source,
        }),
    }
}

impl Recognizer {
    /// Loads the model at `path` (once; every transcription then reuses it).
    pub fn load(path: &Path, config: RecognizerConfig) -> Result<Self, LoadError> {
        check_model_file(path)?;
        let whisper = |source| LoadError::Whisper {
            path: path.into(),
            source,
        };
        let context = WhisperContext::new_with_params(path, WhisperContextParameters::default())
            .map_err(whisper)?;
        let state = context.create_state().map_err(whisper)?;
        let multilingual = context.is_multilingual();
        let model_type = context
            .model_type_readable_str_lossy()
            .map(|s| s.into_owned())
            .unwrap_or_else(|_| "unknown".into());
        let model_audio_ctx = usize::try_from(context.model_n_audio_ctx()).unwrap_or(1500);
        let vocab = vocab_of(&context);
        let threads = config.threads.max(1);
        let recognizer = Recognizer {
            context,
            state,
            config,
            model_path: path.into(),
            model_type,
            multilingual,
            model_audio_ctx,
            vocab,
            fitted: None,
            threads,
        };
        recognizer.resolve_language(None).map_err(|e| match e {
            TranscribeError::Language { language, problem } => {
                LoadError::Language { language, problem }
            }
            TranscribeError::Whisper(source) => whisper(source),
        })?;
        Ok(recognizer)
    }

    /// The model file.
    pub fn model_path(&self) -> &Path {
        &self.model_path
    }

    /// The model's size class as whisper.cpp names it (`tiny`, `base`, ...).
    pub fn model_type(&self) -> &str {
        &self.model_type
    }

    /// True if the model knows many languages (false for the `.en` models).
    pub fn is_multilingual(&self) -> bool {
        self.multilingual
    }

    /// The settings in force.
    pub fn config(&self) -> &RecognizerConfig {
        &self.config
    }

    /// Languages the model recognises, as codes (`en`, `de`, ...).
    pub fn languages(&self) -> Vec<String> {
        if !self.multilingual {
            return vec!["en".into()];
        }
        (0..=whisper_rs::get_lang_max_id())
            .filter_map(whisper_rs::get_lang_str)
            .map(String::from)
            .collect()
    }

    /// The language to use for a request: the request's, else the configured default.
    /// English-only models take only `en` (and `auto`, which means `en` for them).
    pub fn resolve_language(&self, requested: Option<&str>) -> Result<String, TranscribeError> {
        let language = requested
            .filter(|l| !l.trim().is_empty())
            .unwrap_or(&self.config.language)
            .trim()
            .to_ascii_lowercase();
        let bad = |problem: String| TranscribeError::Language {
            language: language.clone(),
            problem,
        };
        // whisper-rs panics on a NUL byte; language codes are short ASCII words anyway.
        if language.len() > 16
            || !language
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(bad("not a language code".into()));
        }
        if !self.multilingual {
            return match language.as_str() {
                "en" | "auto" => Ok("en".into()),
                _ => Err(bad(format!(
                    "the model {} is English-only; use a multilingual model for other languages",
                    self.model_path.display()
                ))),
            };
        }
        if language == "auto" || whisper_rs::get_lang_id(&language).is_some() {
            Ok(language)
        } else {
            Err(bad(
                "not a language whisper knows (codes such as en, de, fr; or auto)".into(),
            ))
        }
    }

    /// The encoder window for `n_samples` of 16 kHz audio: the utterance's frames plus the
    /// margin, or the model's full window if trimming is off or the audio fills it.
    pub fn audio_ctx_for(&self, n_samples: usize) -> usize {
        if !self.config.trim_audio_ctx {
            return self.model_audio_ctx;
        }
        audio_ctx_for(
            n_samples,
            self.config.audio_ctx_margin,
            self.model_audio_ctx,
        )
    }

    /// Transcribes 16 kHz mono audio in `language` (or the default); with `phrases`, the
    /// transcript is the set's likeliest request when the audio supports it about as well as
    /// the open transcript (within the margin), else the open transcript. `prompt` (the
    /// phrase set's words to expect) primes the decoder in place of the configured one.
    pub fn transcribe(
        &mut self,
        samples: &[f32],
        language: Option<&str>,
        phrases: Option<&Matcher>,
        prompt: Option<&str>,
    ) -> Result<Transcription, TranscribeError> {
        let language = self.resolve_language(language)?;
        self.threads = hearth_cores::threads(self.config.threads);
        let text = prompt
            .map(str::to_owned)
            .or_else(|| self.config.prompt.clone());
        let prompt = match text {
            Some(text) => self.prompt_tokens(&text)?,
            None => Vec::new(),
        };
        let audio_seconds = samples.len() as f64 / f64::from(WHISPER_RATE);
        let audio_ctx = self.audio_ctx_for(samples.len());
        // whisper.cpp returns nothing for less than 100 ms, and fails on no samples at all.
        if samples.len() < WHISPER_RATE as usize / 10 {
            return Ok(Transcription {
                text: String::new(),
                language,
                audio_seconds,
                audio_ctx,
                elapsed: Duration::ZERO,
                threads: self.threads,
                retried: false,
                collapsed: false,
                phrase: None,
            });
        }

        let max_tokens = max_tokens_for(audio_seconds);
        let start = Instant::now();
        let Decode {
            mut text,
            mut tokens,
            mut ended,
        } = self.run(samples, &language, &prompt, audio_ctx, max_tokens)?;
        // how many of `tokens` spell the open transcript
        let mut open_len = Some(tokens.len());
        let mut used_ctx = audio_ctx;
        let mut retried = false;
        let mut collapsed = false;
        loop {
            match next_step(&text, &ended, used_ctx, self.model_audio_ctx) {
                Step::Keep => break,
                Step::Collapse(phrase) => {
                    tracing::debug!(looped = %text, %phrase, "the transcript is one phrase over and over: keeping it once");
                    collapsed = true;
                    // the open transcript is now the phrase's first time, and weighs what
                    // that time's tokens weigh
                    open_len = first_time(&tokens, &self.vocab.texts, &phrase);
                    text = phrase;
                    break;
                }
                Step::Wider(wider) => {
                    // what was said goes only to the transcript target (off unless asked
                    // for), never into the log at its default level
                    warn!(
                        audio_ctx = used_ctx,
                        wider,
                        "the transcript looks like a repetition loop; decoding again with a \
                         wider window"
                    );
                    tracing::info!(target: "transcript", looped = %text, "the repetition loop");
                    Decode {
                        text,
                        tokens,
                        ended,
                    } = self.run(samples, &language, &prompt, wider, max_tokens)?;
                    open_len = Some(tokens.len());
                    used_ctx = wider;
                    retried = true;
                }
            }
        }
        // (a transcript cut to a phrase its tokens do not spell has no likelihood to weigh)
        let phrase = match (phrases, open_len) {
            (Some(m), Some(n)) => {
                let open = Open {
                    text: &text,
                    tokens: &tokens[..n],
                    // (a loop cut to its phrase was decoded once: its window likes the loop)
                    retried: retried && !collapsed,
                };
                Some(self.phrase_pass(m, &language, &prompt, open)?)
            }
            _ => None,
        };
        if let Some(p) = phrase.as_ref().filter(|p| p.taken) {
            text = p.phrase.clone().unwrap_or(text);
        }
        Ok(Transcription {
            text,
            language,
            audio_seconds,
            audio_ctx: used_ctx,
            elapsed: start.elapsed(),
            threads: self.threads,
            retried,
            collapsed,
            phrase,
        })
    }

    /// The phrase pass over the last decode's encoder output (see [`crate::phrase_pass`]).
    ///
    /// A transcript that is a request of the set is taken as it is, unless it comes from a
    /// wider window after a loop (`open.retried`): greedy decoding has lost its way in this
    /// audio once already, so its path is not taken on trust. The set's likeliest request is
    /// looked for, and it replaces the transcript only if the audio supports it better, end
    /// of text included. Measured on the spoken session bench's clips: "Cancel all timers."
    /// looped as "cancel timers, cancel timers," in the trimmed and the doubled window, and
    /// the widest wrote "cancel timer," (-3.90 nats with its end of text), where "cancel all
    /// timers." weighed -2.57.
    ///
    /// Either way, a phrase is left if it adds or leaves out a way or an amount, or says
    /// itself twice where the transcript did not: a window that loops likes the loop, and a
    /// set that takes two requests in a row holds "continue the egg timer, continue the egg
    /// timer," (in the trimmed window where "Continue the egg timer." looped to the token cap,
    /// it weighed -2.86 nats against -3.81 for the phrase once). A loop cut to its phrase is
    /// not weighed when it is a request of the set, for the same reason.
    fn phrase_pass(
        &mut self,
        matcher: &Matcher,
        language: &str,
        prompt: &[i32],
        open: Open<'_>,
    ) -> Result<PhrasePass, TranscribeError> {
        let start = Instant::now();
        let accepted = matcher.accepts(open.text);
        if accepted && !open.retried {
            return Ok(PhrasePass {
                open: open.text.into(),
                phrase: Some(open.text.into()),
                open_logprob: 0.0,
                phrase_logprob: 0.0,
                way_contrast: None,
                taken: true,
                near: false,
                steps: 0,
                elapsed: start.elapsed(),
            });
        }
        // the last decode, on the same audio and prompt, left its cache in the state
        let prompt = self.decoder_prompt(language, prompt);
        let mut decoder =
            Primed::after_decode(&mut self.state, prompt, self.threads, self.vocab.eot)?;
        let mut open_logprob = logprob_of(open.tokens);
        let floor = if accepted {
            // weighed as the phrases are: with its end of text
            let ids: Vec<i32> = open.tokens.iter().map(|t| t.0).collect();
            let eot = decoder.eot;
            let lp = phrase_pass::Decoder::logprobs(&mut decoder, &ids)?;
            open_logprob += lp.get(eot).copied().unwrap_or(f32::NEG_INFINITY);
            open_logprob
        } else {
            let margin = self.config.phrase_margin.max(self.config.mend_margin);
            open_logprob - margin.max(self.config.ask_margin)
        };
        let bounds = phrase_pass::Bounds {
            width: self.config.phrase_beam,
            budget: self.config.phrase_budget,
            floor,
        };
        let found = phrase_pass::search(&mut decoder, &self.vocab, matcher, bounds)?;
        let phrase_logprob = found.as_ref().map_or(f32::NEG_INFINITY, |f| f.logprob);
        let way_contrast = match found
            .as_ref()
            .and_then(|f| Some((f, matcher.choice(open.text, &f.text)?)))
        {
            Some((f, choice)) => way_contrast(&self.context, &mut decoder, &f.text, &choice)?,
            None => None,
        };
        let steps = decoder.calls;
        let verdict = found.as_ref().map_or(Verdict::Left, |f| {
            let weighed = Weighed {
                open: open.text,
                accepted,
                open_logprob,
                way_contrast,
            };
            verdict(&self.config, matcher, &weighed, f)
        });
        let stands = verdict == Verdict::Stands;
        let near = verdict == Verdict::Near;
        // a request of the set is the transcript unless a likelier one stands for it
        let taken = stands || accepted;
        tracing::debug!(
            open = open.text,
            retried = open.retried,
            phrase = found.as_ref().map(|f| f.text.as_str()),
            open_logprob,
            phrase_logprob,
            way_contrast,
            stands,
            near,
            taken,
            steps,
            "phrase pass"
        );
        Ok(PhrasePass {
            open: open.text.into(),
            phrase: if accepted && !stands {
                Some(open.text.into())
            } else {
                found.map(|f| f.text)
            },
            open_logprob,
            phrase_logprob,
            way_contrast,
            taken,
            near,
            steps,
            elapsed: start.elapsed(),
        })
    }

    /// The tokens whisper.cpp puts before a transcript: the prompt's (fitted,
    /// [`Recognizer::prompt_tokens`]) after the previous-text marker, start of transcript,
    /// language and task on a multilingual model, no timestamps.
    fn decoder_prompt(&self, language: &str, words: &[i32]) -> Vec<i32> {
        let ctx = &self.context;
        let mut prompt = Vec::new();
        if !words.is_empty() {
            prompt.push(ctx.token_prev());
            prompt.extend_from_slice(words);
        }
        prompt.push(ctx.token_sot());
        if self.multilingual {
            let id = whisper_rs::get_lang_id(language).unwrap_or(0);
            prompt.push(ctx.token_lang(id));
            prompt.push(ctx.token_transcribe());
        }
        prompt.push(ctx.token_not());
        prompt
    }

    /// `text` as the decoder is primed with it ([`Recognizer::prompt_tokens`]), written out:
    /// what of a long prompt is kept.
    pub fn primed_with(&mut self, text: &str) -> Result<String, TranscribeError> {
        let tokens = self.prompt_tokens(text)?;
        let texts = &self.vocab.texts;
        Ok(tokens
            .iter()
            .filter_map(|&t| usize::try_from(t).ok().and_then(|i| texts.get(i)))
            .map(String::as_str)
            .collect())
    }

    /// `text` as the decoder is primed with it: closed as a sentence ([`closed_prompt`]) and
    /// cut to what the decoder holds (half its text context, less the previous-text marker)
    /// at a `, ` between phrases, keeping the first: the words to expect come most important
    /// first. (whisper.cpp itself would keep the last tokens, and a house's names, listed
    /// first, were the ones lost: 368 tokens for Home Assistant's demo house.) The last
    /// prompt's tokens are kept, so a phrase set's costs one tokenising.
    fn prompt_tokens(&mut self, text: &str) -> Result<Vec<i32>, TranscribeError> {
        if let Some((held, tokens)) = &self.fitted {
            if held == text {
                return Ok(tokens.clone());
            }
        }
        let ctx = &self.context;
        let keep = usize::try_from(ctx.n_text_ctx() / 2)
            .unwrap_or(224)
            .saturating_sub(1);
        let tokenize = |t: &str| ctx.tokenize(t, t.len() + 8);
        let mut tokens = tokenize(&closed_prompt(text))?;
        if tokens.len() > keep {
            let phrases: Vec<&str> = text.split(", ").collect();
            let fits = |n: usize| -> Result<Option<Vec<i32>>, TranscribeError> {
                let t = tokenize(&closed_prompt(&phrases[..n].join(", ")))?;
                Ok((t.len() <= keep).then_some(t))
            };
            // the most phrases from the start that fit (tokens grow with phrases)
            let (mut lo, mut hi) = (0, phrases.len());
            let mut best = Vec::new();
            while lo < hi {
                let mid = (lo + hi).div_ceil(2);
                match fits(mid)? {
                    Some(t) => {
                        best = t;
                        lo = mid;
                    }
                    None => hi = mid - 1,
                }
            }
            tracing::info!(
                phrases = phrases.len(),
                kept = lo,
                tokens = best.len(),
                last_kept = lo.checked_sub(1).map_or("", |i| phrases[i]),
                "the prompt is longer than the decoder holds: its first phrases kept"
            );
            tokens = best;
        }
        self.fitted = Some((text.to_owned(), tokens.clone()));
        Ok(tokens)
    }

    /// One whisper.cpp run: the trimmed text, its text tokens each with its
    /// log-probability as the decoder gave it (after whisper.cpp's suppressions), and how the
    /// decode ended (a loop the audio cannot hold is ended where it begins: [`LoopGuard`]).
    fn run(
        &mut self,
        samples: &[f32],
        language: &str,
        prompt: &[i32],
        audio_ctx: usize,
        max_tokens: i32,
    ) -> Result<Decode, TranscribeError> {
        let mut params = FullParams::new(SamplingStrategy::Greedy { best_of: 1 });
        params.set_n_threads(i32::try_from(self.threads).unwrap_or(1));
        params.set_language(Some(language));
        params.set_translate(false);
        params.set_no_context(true);
        params.set_no_timestamps(true);
        params.set_single_segment(true);
        params.set_print_special(false);
        params.set_print_progress(false);
        params.set_print_realtime(false);
        params.set_print_timestamps(false);
        params.set_suppress_nst(true);
        params.set_temperature(0.0);
        params.set_temperature_inc(0.0);
        params.set_max_tokens(max_tokens);
        if audio_ctx < self.model_audio_ctx {
            params.set_audio_ctx(i32::try_from(audio_ctx).unwrap_or(0));
        }
        if !prompt.is_empty() {
            params.set_tokens(prompt);
        }
        let audio_seconds = samples.len() as f64 / f64::from(WHISPER_RATE);
        let n_vocab = usize::try_from(self.context.n_vocab()).unwrap_or(0);
        let guard = LoopGuard::new(&self.vocab, n_vocab, audio_seconds);
        let state = &mut self.state;
        let (decoded, looped) = guard.decode(params, |params| state.full(params, samples));
        decoded?;
        let mut text = String::new();
        let mut tokens = Vec::new();
        for segment in self.state.as_iter() {
            text.push_str(&segment.to_str_lossy()?);
            for t in (0..segment.n_tokens()).filter_map(|i| segment.get_token(i)) {
                let data = t.token_data();
                if data.id < self.vocab.eot {
                    tokens.push((data.id, data.plog));
                }
            }
        }
        let text = text.trim().to_string();
        let logprob = logprob_of(&tokens);
        tracing::debug!(audio_ctx, n_tokens = tokens.len(), max_tokens, logprob, looped = looped.is_some(), %text, "whisper decoded");
        let ended = match looped {
            Some(phrase) => Ended::Loop(phrase),
            None if reached_cap(tokens.len(), max_tokens) => Ended::Cap,
            None => Ended::Text,
        };
        Ok(Decode {
            text,
            tokens,
            ended,
        })
    }
}

/// The log-likelihood of a decode: the sum of its tokens' log-probabilities.
fn logprob_of(tokens: &[(i32, f32)]) -> f32 {
    tokens.iter().map(|t| t.1).sum()
}

/// How many tokens from the start of a looped decode spell `phrase`'s first time: the fewest
/// whose texts (`texts[id]`) spell it, or `None` if no prefix does (a token that is part of a
/// character, say). Whisper decodes greedily, so these tokens weigh what they would had it
/// stopped after the phrase, less the end of text it never chose.
pub fn first_time(tokens: &[(i32, f32)], texts: &[String], phrase: &str) -> Option<usize> {
    let mut spelt = String::new();
    for (n, &(id, _)) in tokens.iter().enumerate() {
        spelt.push_str(texts.get(usize::try_from(id).ok()?)?);
        let so_far = spelt.trim_start();
        if so_far.len() >= phrase.len() {
            return so_far.starts_with(phrase).then_some(n + 1);
        }
    }
    None
}

/// The text tokens' texts (bytes a token does not complete as UTF-8 read lossily: such a
/// token carries `\u{fffd}` and the phrase pass never writes it).
fn vocab_of(context: &WhisperContext) -> Vocab {
    let eot = context.token_eot();
    let texts = (0..eot)
        .map(|id| {
            context
                .token_to_bytes(id)
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default()
        })
        .collect();
    Vocab { texts, eot }
}

/// The initial prompt as whisper is given it: ended as a sentence (a `.` added unless it ends
/// with `.`, `?` or `!`). A list of words left open ("…, thermostat, lock") reads to whisper
/// as text the transcript continues, and it then drops the command's first word when that
/// could continue the list: "Lock the front door." was heard as "the front door,", "Unlock
/// the garage door." as "the garage door." With the list closed, an evening's 52 spoken
/// requests (`cargo bench --bench session -- spoken`, the demo home's words) were heard with
/// 16 differences from what was said instead of 23, and no first word lost.
pub fn closed_prompt(prompt: &str) -> String {
    let prompt = prompt.trim_end();
    if prompt.ends_with(['.', '?', '!']) {
        prompt.to_string()
    } else {
        format!("{prompt}.")
    }
}

/// What to do with a decode's transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// It stands.
    Keep,
    /// It ran to the token cap repeating this phrase from its first word: the phrase, once,
    /// is the transcript.
    Collapse(String),
    /// It looks like a repetition loop that only a wider window can settle: decode again with
    /// this `audio_ctx`.
    Wider(usize),
}

/// One whisper.cpp run's result.
struct Decode {
    /// The text, trimmed.
    text: String,
    /// Its text tokens, each with its log-probability.
    tokens: Vec<(i32, f32)>,
    ended: Ended,
}

/// How a decode ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// Whisper ended the text.
    Text,
    /// At the token cap.
    Cap,
    /// Where it began this phrase again with more words than the audio holds
    /// ([`LoopGuard`]).
    Loop(String),
}

/// The step after a decode with `audio_ctx` that returned `text` and `ended` so (`full` is
/// the model's window). Only a loop that ran to the cap, or that the guard ended, is cut to
/// its phrase: then the text is more than the audio could hold. A transcript that repeats itself
/// short of the cap may be what was said ("thank you, thank you"), so it is decoded again with
/// a wider window (twice this one, at most `full`), and with the full window it stands.
///
/// A loop of one word ("Read Read Read …" for "Read me the story.", seen on a Piper take in
/// CI) is whisper stuck on the first word, not the command said again: it is decoded again
/// with a wider window, and cut to the word only when the window is already full.
pub fn next_step(text: &str, ended: &Ended, audio_ctx: usize, full: usize) -> Step {
    if let Ended::Loop(phrase) = ended {
        return Step::Collapse(phrase.clone());
    }
    if !looks_like_a_loop(text, ended == &Ended::Cap) {
        return Step::Keep;
    }
    if ended == &Ended::Cap {
        if let Some(phrase) = repeated_phrase(text) {
            if phrase.split_whitespace().nth(1).is_some() || audio_ctx >= full {
                return Step::Collapse(phrase);
            }
        }
    }
    if audio_ctx >= full {
        return Step::Keep;
    }
    Step::Wider(audio_ctx.saturating_mul(2).min(full))
}

/// True if decoding stopped at the token cap rather than at the end of the text.
fn reached_cap(n_tokens: usize, max_tokens: i32) -> bool {
    n_tokens >= usize::try_from(max_tokens).unwrap_or(usize::MAX)
}

/// True if a transcript looks like whisper's repetition loop: decoding ran to the token cap
/// (`at_cap`), some phrase of four words comes three times, or a phrase comes twice in a row
/// ([`repeats_back_to_back`]).
pub fn looks_like_a_loop(text: &str, at_cap: bool) -> bool {
    if at_cap || repeats_back_to_back(text) {
        return true;
    }
    let words: Vec<String> = text
        .split_whitespace()
        .map(plain_word)
        .filter(|w| !w.is_empty())
        .collect();
    let n = 4;
    if words.len() < 3 * n {
        return false;
    }
    let mut counts = std::collections::HashMap::new();
    for phrase in words.windows(n) {
        let count = counts.entry(phrase).or_insert(0);
        *count += 1;
        if *count >= 3 {
            return true;
        }
    }
    false
}

/// True if some phrase comes twice in a row, words compared without case or punctuation: a
/// phrase of two words or more ("What time is it? What time is it?"), or a one-word sentence
/// ("Stop. Stop."); the second time may be cut short by the end of the text, if at least two
/// words and half the phrase are there ("it's too dark in the hallway, it's too dark in the").
/// This is how whisper's repetition loop looks when it ends after the second pass; it is also
/// how a speaker who says a thing twice looks, which is why it only ever costs a second decode.
pub fn repeats_back_to_back(text: &str) -> bool {
    // each word, and whether it ends a sentence
    let words: Vec<(String, bool)> = text
        .split_whitespace()
        .map(|w| (plain_word(w), w.ends_with(['.', '?', '!'])))
        .filter(|(w, _)| !w.is_empty())
        .collect();
    let plain: Vec<&str> = words.iter().map(|(w, _)| w.as_str()).collect();
    words.iter().enumerate().any(|(start, (_, ends_sentence))| {
        let rest = &plain[start..];
        // the phrase, then the phrase again
        let twice = (1..=rest.len() / 2)
            .any(|len| (len > 1 || *ends_sentence) && rest[..len] == rest[len..2 * len]);
        // the phrase, then its first words up to the end of the text
        let cut_short = (3..rest.len()).any(|len| {
            let tail = rest.len() - len;
            tail >= 2 && tail < len && 2 * tail >= len && rest[..tail] == rest[len..]
        });
        twice || cut_short
    })
}

/// The phrase a looped transcript repeats, if the whole transcript is that phrase said at least
/// three times from its first word (the last time possibly cut off by the token cap), words
/// compared without case or punctuation: "turn on the kitchen light, turn on the kitchen
/// light, turn on the" → "turn on the kitchen light". The phrase keeps its own spelling, minus
/// the separator before the next repetition. None for anything else, such as a loop that
/// begins after other words (its first pass may have lost the end of what was said).
pub fn repeated_phrase(text: &str) -> Option<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let norm: Vec<String> = words.iter().map(|w| plain_word(w)).collect();
    if norm.iter().any(String::is_empty) {
        return None;
    }
    let n = norm.len();
    let period = (1..=n / 3).find(|&p| (p..n).all(|i| norm[i] == norm[i % p]))?;
    phrase_of(&words, period)
}

/// The encoder window for `n_samples` of 16 kHz audio: `ceil(seconds × 50) + margin`, at most
/// `full` (the model's window, 1500).
pub fn audio_ctx_for(n_samples: usize, margin: usize, full: usize) -> usize {
    let per_frame = WHISPER_RATE as usize / AUDIO_CTX_PER_SECOND;
    n_samples
        .div_ceil(per_frame)
        .saturating_add(margin)
        .min(full)
}

/// A cap on the tokens decoded for an utterance of `seconds`: speech runs at about 4 tokens a
/// second, so 8 a second plus 24 never cuts real speech short but stops a decoder caught in a
/// repetition loop (which, without temperature fallback, would run to the text context's end).
pub fn max_tokens_for(seconds: f64) -> i32 {
    (24.0 + 8.0 * seconds).clamp(24.0, 224.0) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_is_closed_as_a_sentence() {
        assert_eq!(
            closed_prompt("kitchen, front, lock"),
            "kitchen, front, lock."
        );
        assert_eq!(closed_prompt("kitchen, lock.  "), "kitchen, lock.");
        assert_eq!(closed_prompt("Is it locked?"), "Is it locked?");
        assert_eq!(closed_prompt("Stop!"), "Stop!");
    }

    #[test]
    fn a_phrase_over_and_over_from_the_start_is_that_phrase() {
        // what tiny.en printed for kitchen.wav and alexa.wav with trimmed windows
        assert_eq!(
            repeated_phrase(
                "turn on the kitchen light, turn on the kitchen light, turn on the kitchen light, turn on the"
            )
            .as_deref(),
            Some("turn on the kitchen light")
        );
        assert_eq!(
            repeated_phrase(
                "Alexa, turn on the kitchen light. Alexa, turn on the kitchen light. Alexa, turn on the kitchen light. Alexa, turn on"
            )
            .as_deref(),
            Some("Alexa, turn on the kitchen light.")
        );
        // a loop after other words: its first pass may have lost the end of the command
        assert_eq!(
            repeated_phrase("what time is it please switch off the lights off the lights off the lights off the lights"),
            None
        );
        // twice is not a loop; a real sentence is not either
        assert_eq!(repeated_phrase("on and on, on and on"), None);
        assert_eq!(repeated_phrase("turn on the kitchen light"), None);
        assert_eq!(repeated_phrase(""), None);
        assert_eq!(repeated_phrase("no no no").as_deref(), Some("no"));
    }

    /// What tiny.en returned for synthesised commands (Piper, 0.8–1.25 × the voice's pace, with
    /// and without room noise) in the trimmed window with the house's words as prompt: the
    /// loop ended by itself after the second or third pass, short of the token cap.
    const SAID_TWICE_BY_WHISPER: [&str; 7] = [
        "What time is it? What time is it?",
        "Thank you. Thank you.",
        "Thank you. Thank you. Thank you.",
        "good night. Good night.",
        "It's too dark in the hallway. It's too dark in the hallway.",
        "Thank you. Thank you. Thank you. Thank you. Thank you.",
        "what time is it? what time is it? what time is it?",
    ];

    #[test]
    fn a_phrase_twice_in_a_row_is_decoded_again_with_a_wider_window_never_cut() {
        for twice in SAID_TWICE_BY_WHISPER.into_iter().chain([
            "it's too dark in the hallway, it's too dark in the",
            "Stop. Stop.",
        ]) {
            assert!(repeats_back_to_back(twice), "{twice}");
            assert!(looks_like_a_loop(twice, false), "{twice}");
            // 1.3 s of audio (66 frames + the margin of 256): decoded again with twice the
            // window
            assert_eq!(
                next_step(twice, &Ended::Text, 322, 1500),
                Step::Wider(644),
                "{twice}"
            );
            assert_eq!(
                next_step(twice, &Ended::Text, 644, 1500),
                Step::Wider(1288),
                "{twice}"
            );
            assert_eq!(
                next_step(twice, &Ended::Text, 1288, 1500),
                Step::Wider(1500),
                "{twice}"
            );
            // whisper does not loop in the full window: what it hears twice there was said
            // twice, and stands
            assert_eq!(
                next_step(twice, &Ended::Text, 1500, 1500),
                Step::Keep,
                "{twice}"
            );
        }
    }

    #[test]
    fn a_collapsed_loop_weighs_what_its_first_time_weighs() {
        let texts: Vec<String> = [" Help", " me", " the", " time", ".", "\u{fffd}"]
            .map(String::from)
            .to_vec();
        let looped = [(0, -0.5), (1, -0.25), (2, -0.125), (3, -1.0), (4, -0.5)];
        let twice: Vec<(i32, f32)> = looped.iter().chain(&looped).copied().collect();
        let weight =
            |phrase: &str| first_time(&twice, &texts, phrase).map(|n| logprob_of(&twice[..n]));
        assert_eq!(weight("Help me the time."), Some(-2.375));
        // the phrase as repeated_phrase cuts it, without its closing comma
        assert_eq!(weight("Help me the time"), Some(-1.875));
        // tokens that spell something else, or too little, or an id outside the vocabulary
        assert_eq!(first_time(&twice, &texts, "Help us"), None);
        assert_eq!(first_time(&looped[..2], &texts, "Help me the time."), None);
        assert_eq!(first_time(&[(9, -1.0)], &texts, "Help"), None);
    }

    #[test]
    fn only_a_loop_that_ran_to_the_token_cap_is_cut_to_its_phrase() {
        let looped = "turn on the kitchen light, turn on the kitchen light, turn on the kitchen \
                      light, turn on the";
        assert_eq!(
            next_step(looped, &Ended::Cap, 320, 1500),
            Step::Collapse("turn on the kitchen light".into())
        );
        // the same loop at the full window: still more than the audio holds
        assert_eq!(
            next_step(looped, &Ended::Cap, 1500, 1500),
            Step::Collapse("turn on the kitchen light".into())
        );
        // one word to the cap: whisper stuck on the first word; wider, cut only at the full
        let stuck = "Read Read Read Read Read Read Read Read Read Read Read Read";
        assert_eq!(next_step(stuck, &Ended::Cap, 320, 1500), Step::Wider(640));
        assert_eq!(
            next_step(stuck, &Ended::Cap, 1500, 1500),
            Step::Collapse("Read".into())
        );
        // three times, but whisper ended the text by itself: decoded again, not cut
        assert_eq!(
            next_step("Thank you. Thank you. Thank you.", &Ended::Text, 322, 1500),
            Step::Wider(644)
        );
        // at the cap after other words: decoded again
        let after = "what time is it please switch off the lights off the lights off the lights";
        assert_eq!(next_step(after, &Ended::Cap, 320, 1500), Step::Wider(640));
        assert_eq!(next_step(after, &Ended::Cap, 1500, 1500), Step::Keep);
        // the guard ended a loop where it began the phrase again: cut to it, at any window
        let begun = Ended::Loop("turn on the kitchen light".into());
        assert_eq!(
            next_step("turn on the kitchen light, turn on", &begun, 320, 1500),
            Step::Collapse("turn on the kitchen light".into())
        );
        // nothing repeats
        assert_eq!(
            next_step("turn on the kitchen light.", &Ended::Text, 322, 1500),
            Step::Keep
        );
    }

    #[test]
    fn commands_that_do_not_repeat_are_not_taken_for_loops() {
        for fine in [
            "turn on the kitchen light.",
            "What time is it? Please switch off the lights in the living room.",
            "turn on the light, turn on the fan, turn on the radio",
            "Lock the front door and the back door.",
            "Is the front door locked?",
            "It's too dark in the hallway.",
            "had had enough",
            "the front door.",
            "Good night.",
            "",
        ] {
            assert!(!repeats_back_to_back(fine), "{fine}");
            assert!(!looks_like_a_loop(fine, false), "{fine}");
            assert_eq!(
                next_step(fine, &Ended::Text, 322, 1500),
                Step::Keep,
                "{fine}"
            );
        }
    }

    #[test]
    fn audio_ctx_follows_the_utterance_and_is_clamped() {
        // 1 s = 50 frames, + margin.
        assert_eq!(audio_ctx_for(16_000, 64, 1500), 114);
        // Partial frames round up.
        assert_eq!(audio_ctx_for(16_001, 0, 1500), 51);
        assert_eq!(audio_ctx_for(0, 64, 1500), 64);
        // 30 s and more: the full window.
        assert_eq!(audio_ctx_for(30 * 16_000, 64, 1500), 1500);
        assert_eq!(audio_ctx_for(usize::MAX, 64, 1500), 1500);
    }

    #[test]
    fn repetition_loops_are_recognised() {
        let looped = "Alexa turn on the kitchen light. Alexa turn on the kitchen light. \
                      Alexa turn on the kitchen light. Alexa turn on the";
        assert!(looks_like_a_loop(looped, false));
        // Cut short by the cap, even without visible repetition.
        assert!(looks_like_a_loop("turn on the", true));
        for fine in [
            "turn on the kitchen light.",
            "What time is it? Please switch off the lights in the living room.",
            "turn on the light, turn on the fan, turn on the radio",
            "",
        ] {
            assert!(!looks_like_a_loop(fine, false), "{fine}");
        }
    }

    #[test]
    fn token_cap_grows_with_duration_within_bounds() {
        assert_eq!(max_tokens_for(0.0), 24);
        assert_eq!(max_tokens_for(2.0), 40);
        assert_eq!(max_tokens_for(600.0), 224);
    }

    #[test]
    fn model_file_problems_name_the_file_and_the_fix() {
        let dir = std::env::temp_dir().join(format!("hearth-stt-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("nope.bin");
        let err = check_model_file(&missing).unwrap_err();
        assert!(matches!(err, LoadError::Missing { .. }));
        let msg = err.to_string();
        assert!(msg.contains("nope.bin") && msg.contains("--model"), "{msg}");

        let not_ggml = dir.join("not-ggml.bin");
        std::fs::write(&not_ggml, b"GGUF....").unwrap();
        assert!(matches!(
            check_model_file(&not_ggml),
            Err(LoadError::NotGgml { .. })
        ));
        let short = dir.join("short.bin");
        std::fs::write(&short, b"lm").unwrap();
        assert!(matches!(
            check_model_file(&short),
            Err(LoadError::NotGgml { .. })
        ));
        // A directory opens on Linux but cannot be read.
        assert!(matches!(
            check_model_file(&dir),
            Err(LoadError::Unreadable { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
