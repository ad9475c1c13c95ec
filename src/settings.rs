//! Settings: the command line's flags over the configuration file over the environment,
//! resolved in one place for every command.
//!
//! `hearth run`, `hearth ask` and `hearth doctor` all start from a [`Settings`] and ask it the
//! same questions (which preset, which model files, which tools directory, which bus, which
//! speech recognizer, which voice, which detector), so what `doctor` checks is what `run`
//! will use. Each question is one method; each rule lives there and nowhere else:
//!
//! - a flag wins over the file (and a board profile under it, [`Config::discover_on`]), the
//!   file over the environment, the environment over the built-in default;
//! - a model file the *configuration* names by a bare file name (`ggml-base.en.bin`, as board
//!   profiles give them) is in the model directory ([`crate::models::in_dir`]); a file named
//!   on the command line is taken as it is.
//!
//! Nothing here loads a model or opens a device: the answers are paths and plain values, and
//! each command decides what to check and when.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::config::{BusKind, Config, ConfigError};
use crate::models::ModelError;
use crate::preset::{Preset, PresetError};
use crate::supervisor::{EngineChoice, StartError, TextOptions};

/// The preset when neither the command line nor the configuration names one.
pub(crate) const DEFAULT_PRESET: &str = "qwen2.5-coder";

/// The wake word when none is configured: microWakeWord's "Okay Nabu" (Apache-2.0), the
/// Home Assistant voice standard.
pub(crate) const DEFAULT_WAKE_WORD: &str = "okay_nabu";

/// The whisper.cpp model `hearth-stt` gets when nothing names one (in the model directory).
pub(crate) const DEFAULT_WHISPER_MODEL: &str = "ggml-tiny.en.bin";

/// The environment variable naming the whisper.cpp model (under `--stt-model` and
/// `[stt] model`).
pub(crate) const WHISPER_MODEL_ENV: &str = "HEARTH_WHISPER_MODEL";

/// The environment variable naming the tools directory (under `--tools` and `[agent] tools`).
pub(crate) const TOOLS_ENV: &str = "HEARTH_TOOLS";

/// The tools directory used when nothing names one and it exists (relative to the working
/// directory: a checkout's demo tools).
pub(crate) const LOCAL_TOOLS_DIR: &str = "tools";

/// Why the settings cannot be resolved; each names the problem and the fix.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The configuration file (or the board profile) is missing or wrong; the error names
    /// the file, line and column and what is expected.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// No model directory to look for model files in (set `$HEARTH_MODEL_DIR`).
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The preset named by `--preset` or `[agent] preset` does not load; the error lists the
    /// valid names or names the file.
    #[error(transparent)]
    Preset(#[from] PresetError),
    /// `--bus` is not `session`, `system` or `none`.
    #[error("--bus {0:?}: use session, system or none")]
    Bus(String),
    /// The whisper.cpp model for `hearth-stt` is not there.
    #[error(
        "the whisper model {} is missing: {}, or name one \
         with --stt-model FILE ([stt] model in the config, or ${WHISPER_MODEL_ENV})",
        .0.display(),
        crate::speech_models::how_to_get(.0)
    )]
    WhisperMissing(PathBuf),
    /// `whisper:NAME` names no speech model of the catalogue (the error lists them), or
    /// there is no model directory to look for its file in.
    #[error(transparent)]
    SpeechModel(#[from] crate::speech_models::ResolveError),
    /// The default voice cannot be placed (no model directory).
    #[error(transparent)]
    Voice(#[from] crate::tts::TtsError),
    /// The LLM model file cannot be found or checked (for the on-disk prompt cache).
    #[error(transparent)]
    Start(#[from] StartError),
    /// `[homeassistant]` cannot be read for the house's things (its token file).
    #[error(transparent)]
    House(#[from] crate::house::HouseError),
    /// `[listen] earcon` names a WAV file that cannot be used.
    #[error("[listen] earcon: {0} (or earcon = \"chime\" or \"none\")")]
    Earcon(crate::audio::AudioError),
    /// `[audio] bell` names a WAV file that cannot be used.
    #[error("[audio] bell: {0} (or bell = \"bell\" or \"none\")")]
    Bell(crate::audio::AudioError),
    /// `[listen] early_ms` is shorter than the pause the end-of-turn model hears.
    #[error(
        "[listen] early_ms = {0} is shorter than the {pause} ms of silence Smart Turn hears \
         (end_of_turn = \"smart-turn\"), so it would never be asked: leave early_ms out (it is \
         then {pause}), set it to {pause} or more, or set end_of_turn = \"silence\"",
        pause = crate::audio::listen::TURN_PAUSE_MS
    )]
    EarlyForTurnModel(u32),
}

/// `--bus` as the command line gives it: `session`, `system` or `none`.
pub fn parse_bus(flag: &str) -> Result<BusKind, SettingsError> {
    flag.parse::<BusKind>()
        .map_err(|_| SettingsError::Bus(flag.to_string()))
}

/// What the command line said. Every field is optional: `None` lets the configuration
/// file, then the environment, then the default decide. Commands fill the fields they have
/// flags for.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    /// `--config`: the configuration file.
    pub config: Option<PathBuf>,
    /// `--board`: a built-in board profile under the configuration file.
    pub board: Option<String>,
    /// `--preset`: a preset name or preset file.
    pub preset: Option<String>,
    /// `--model`: the LLM model file.
    pub model: Option<PathBuf>,
    /// `--tools`: the tools directory.
    pub tools: Option<PathBuf>,
    /// `--bus`: the bus the D-Bus face is served on.
    pub bus: Option<BusKind>,
    /// `--n-ctx`: the context length.
    pub n_ctx: Option<u32>,
    /// `--stt`: a Wyoming ASR server instead of the `hearth-stt` child.
    pub stt: Option<String>,
    /// `--stt-model`: the whisper.cpp model for the `hearth-stt` child.
    pub stt_model: Option<PathBuf>,
    /// `--stt-prompt`: words speech recognition should expect.
    pub stt_prompt: Option<String>,
    /// `--voice`: the Piper voice.
    pub voice: Option<PathBuf>,
    /// `--mic`: the capture device.
    pub mic: Option<String>,
    /// `--speaker`: the playback device.
    pub speaker: Option<String>,
    /// `--wake`: the wake words (empty: none, every utterance is a request).
    pub wake: Option<Vec<String>>,
}

/// Speech recognition as resolved: a Wyoming server to connect to, or the `hearth-stt`
/// child with its model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SttChoice {
    /// Connect to this Wyoming ASR server (`tcp://HOST:PORT` or `HOST:PORT`).
    Server(String),
    /// Spawn `hearth-stt` with this whisper.cpp model (not checked here: `hearth run`
    /// fails with [`SettingsError::WhisperMissing`] when it is not a file).
    Child {
        /// The whisper.cpp model file.
        model: PathBuf,
        /// `[stt] threads`: CPU threads for `hearth-stt`.
        threads: Option<u32>,
    },
}

/// The flags, the configuration they were read with, and the model directory: every
/// command's settings come from here.
#[derive(Debug, Clone)]
pub struct Settings {
    /// What the command line said.
    pub flags: Flags,
    /// The configuration file (over the board profile, if any), or the defaults.
    pub config: Config,
    /// Where the configuration was read from (`None`: no file, the defaults).
    pub config_path: Option<PathBuf>,
    /// The model directory ([`crate::models::model_dir`]), if the environment gives one.
    model_dir: Option<PathBuf>,
    /// hearth's state directory ([`crate::timers::state_dir`]: the timers), if the
    /// environment gives one.
    state_dir: Option<PathBuf>,
}

impl Settings {
    /// Read the configuration as `--config` and `--board` say ([`Config::discover_on`]) and
    /// resolve under `flags`.
    pub fn discover(flags: Flags) -> Result<Settings, SettingsError> {
        let (config, path) = Config::discover_on(flags.config.as_deref(), flags.board.as_deref())?;
        Ok(Settings::new(flags, config, path))
    }

    /// Settings from a configuration already read (`hearth doctor` examines the defaults
    /// when the file is broken). The model directory is looked up in the environment.
    pub fn new(flags: Flags, config: Config, config_path: Option<PathBuf>) -> Settings {
        Settings::with_env(flags, config, config_path, |k| std::env::var_os(k))
    }

    /// [`new`](Self::new) with the environment given as a lookup function (tests).
    pub fn with_env(
        flags: Flags,
        config: Config,
        config_path: Option<PathBuf>,
        env: impl Fn(&str) -> Option<OsString>,
    ) -> Settings {
        Settings {
            flags,
            config,
            config_path,
            model_dir: crate::models::model_dir_from(&env),
            state_dir: crate::timers::state_dir_from(&env).ok(),
        }
    }

    /// These settings with `dir` as the model directory (`hearth models pull --dir`).
    pub fn with_model_dir(self, dir: PathBuf) -> Settings {
        Settings {
            model_dir: Some(dir),
            ..self
        }
    }

    /// hearth's state directory (where the daemon keeps its timers), if the environment
    /// gives one.
    pub fn state_dir(&self) -> Option<&Path> {
        self.state_dir.as_deref()
    }

    /// The model directory, or [`ModelError::NoModelDir`] (which says which variable to set).
    pub fn model_dir(&self) -> Result<&Path, SettingsError> {
        self.model_dir
            .as_deref()
            .ok_or(SettingsError::Model(ModelError::NoModelDir))
    }

    /// A model file the configuration names: a bare file name that does not exist here is in
    /// the model directory ([`crate::models::in_dir`]); any other path is taken as it is.
    pub(crate) fn config_model_file(&self, path: &Path) -> Result<PathBuf, SettingsError> {
        Ok(crate::models::in_dir(path, self.model_dir()?))
    }

    /// The model file the configuration names ([`config_model_file`](Self::config_model_file)),
    /// else `default` in the model directory.
    pub(crate) fn model_file_or(
        &self,
        configured: Option<&Path>,
        default: &str,
    ) -> Result<PathBuf, SettingsError> {
        match configured {
            Some(m) => self.config_model_file(m),
            None => Ok(self.model_dir()?.join(default)),
        }
    }

    /// The preset's name (or file): `--preset`, else `[agent] preset`, else
    /// [`DEFAULT_PRESET`].
    pub fn preset_name(&self) -> &str {
        self.flags
            .preset
            .as_deref()
            .or(self.config.agent.preset.as_deref())
            .unwrap_or(DEFAULT_PRESET)
    }

    /// The preset [`preset_name`](Self::preset_name) names, loaded and validated.
    pub fn preset(&self) -> Result<Preset, SettingsError> {
        Ok(Preset::load(self.preset_name())?)
    }

    /// The LLM model file when one is named: `--model` (as given), else `[agent] model` (in
    /// the model directory when a bare name). `None`: the preset's model in the model
    /// directory ([`crate::supervisor::model_path`]).
    pub(crate) fn llm_model(&self) -> Result<Option<PathBuf>, SettingsError> {
        match (&self.flags.model, &self.config.agent.model) {
            (Some(m), _) => Ok(Some(m.clone())),
            (None, Some(m)) => Ok(Some(self.config_model_file(m)?)),
            (None, None) => Ok(None),
        }
    }

    /// The tools directory: `--tools`, else `[agent] tools`, else `$HEARTH_TOOLS`, else
    /// `./tools` if it exists. `None`: the built-in tools only.
    pub fn tools_dir(&self) -> Option<PathBuf> {
        self.flags
            .tools
            .clone()
            .or_else(|| self.config.agent.tools.clone())
            .or_else(|| std::env::var_os(TOOLS_ENV).map(PathBuf::from))
            .or_else(|| Some(PathBuf::from(LOCAL_TOOLS_DIR)).filter(|d| d.is_dir()))
    }

    /// The bus the D-Bus face is served on, and whether it was chosen (`--bus` or `[bus]
    /// bus`: an unreachable bus is then an error) or is the default ([`crate::bus::choose`]).
    pub fn bus(&self) -> (BusKind, bool) {
        crate::bus::choose(self.flags.bus, self.config.bus.bus)
    }

    /// The satellites of `[[satellite]]` (the file was checked: a bad url is still named).
    pub fn satellites(
        &self,
    ) -> Result<Vec<crate::satellite::SatelliteConfig>, crate::satellite::SatelliteError> {
        let sats = self.config.satellite.iter();
        sats.map(|s| {
            crate::satellite::SatelliteConfig::new(&s.name, s.url.as_deref(), s.room.clone())
        })
        .collect()
    }

    /// Speech recognition: the Wyoming server of `--stt` or `[stt] server`, unless
    /// `--stt-model` is given without `--stt` (a model on the command line means the child,
    /// whatever the file says); else the child with [`whisper_model`](Self::whisper_model).
    pub fn stt(&self) -> Result<SttChoice, SettingsError> {
        let server = self.flags.stt.as_ref().or(self.config.stt.server.as_ref());
        match server {
            Some(addr) if self.flags.stt_model.is_none() || self.flags.stt.is_some() => {
                Ok(SttChoice::Server(addr.clone()))
            }
            _ => Ok(SttChoice::Child {
                model: self.whisper_model()?,
                threads: self.config.stt.threads,
            }),
        }
    }

    /// The whisper.cpp model for the `hearth-stt` child: `--stt-model` (as given), else
    /// `[stt] model` (in the model directory when a bare name), else `$HEARTH_WHISPER_MODEL`,
    /// else [`DEFAULT_WHISPER_MODEL`] in the model directory. Any of the three may name a
    /// speech model of the catalogue instead (`whisper:base.en`: its file in the model
    /// directory, [`crate::speech_models::resolve`]). Not checked.
    pub(crate) fn whisper_model(&self) -> Result<PathBuf, SettingsError> {
        let named = |m: &Path| crate::speech_models::resolve(m, self.model_dir.as_deref());
        if let Some(m) = &self.flags.stt_model {
            return Ok(named(m)?);
        }
        if let Some(m) = &self.config.stt.model {
            let m = named(m)?;
            return self.config_model_file(&m);
        }
        match std::env::var_os(WHISPER_MODEL_ENV) {
            Some(m) => Ok(named(Path::new(&m))?),
            None => Ok(self.model_dir()?.join(DEFAULT_WHISPER_MODEL)),
        }
    }

    /// How long Stt may take over one utterance: `[stt] timeout_s`, else
    /// [`crate::stt::UTTERANCE_TIMEOUT`].
    pub fn stt_timeout(&self) -> std::time::Duration {
        self.config
            .stt
            .timeout_s
            .map(|s| std::time::Duration::from_secs(u64::from(s)))
            .unwrap_or(crate::stt::UTTERANCE_TIMEOUT)
    }

    /// Words speech recognition should expect: `--stt-prompt`, else `[stt] prompt`. `None`:
    /// the tools' vocabulary.
    pub fn stt_prompt(&self) -> Option<String> {
        self.flags
            .stt_prompt
            .clone()
            .or_else(|| self.config.stt.prompt.clone())
    }

    /// The voice: `[tts] server` (a Wyoming text-to-speech server, with `[tts] voice` as its
    /// name for the voice) unless `--voice` names a Piper voice; else the Piper voice of
    /// `--voice` (as given), else `[tts] voice` (in the model directory when a bare name), else
    /// the default voice in the model directory, with `[tts]`'s ONNX Runtime library,
    /// espeak-ng data and speaking rate. Not checked ([`crate::tts::VoiceSource::check`] does).
    pub fn voice(&self) -> Result<crate::tts::VoiceSource, SettingsError> {
        let t = &self.config.tts;
        if let (None, Some(uri)) = (&self.flags.voice, &t.server) {
            return Ok(crate::tts::VoiceSource::Server(crate::tts::ServerConfig {
                uri: uri.clone(),
                voice: t.voice.as_ref().map(|v| v.to_string_lossy().into_owned()),
            }));
        }
        let mut tts = match (&self.flags.voice, &t.voice) {
            (Some(v), _) => crate::tts::TtsConfig::new(v.clone()),
            (None, Some(v)) => crate::tts::TtsConfig::new(self.config_model_file(v)?),
            (None, None) => crate::tts::TtsConfig::new(
                self.model_dir()?
                    .join(format!("{}.onnx", crate::tts::DEFAULT_VOICE)),
            ),
        };
        tts.ort_library = t.onnxruntime.clone();
        tts.espeak_data = t.espeak_data.clone();
        tts.length_scale = t.length_scale;
        Ok(crate::tts::VoiceSource::Piper(tts))
    }

    /// ONNX Runtime's library as it would be loaded for a model at `near`: `[tts]
    /// onnxruntime`, else looked up (`$ORT_DYLIB_PATH`, beside `near`, the model directory,
    /// beside the executable, the library path).
    pub(crate) fn onnx_runtime(&self, near: &Path) -> Result<PathBuf, crate::onnx::OnnxError> {
        crate::onnx::find_library(
            self.config.tts.onnxruntime.as_deref(),
            |k| std::env::var_os(k),
            &crate::onnx::search_dirs(near),
        )
    }

    /// The Silero VAD model, or `None` when `[listen] vad = "energy"` (Silero is the
    /// default): `[listen] silero_model` (in the model directory when a bare name), else
    /// [`crate::audio::silero::SILERO_FILE`] in the model directory. Not checked.
    pub(crate) fn vad_model(&self) -> Result<Option<PathBuf>, SettingsError> {
        use crate::config::Vad;
        match self.config.listen.vad.unwrap_or(Vad::Silero) {
            Vad::Energy => Ok(None),
            Vad::Silero => self
                .model_file_or(
                    self.config.listen.silero_model.as_deref(),
                    crate::audio::silero::SILERO_FILE,
                )
                .map(Some),
        }
    }

    /// The Smart Turn model unless `[listen] end_of_turn` is `"silence"` (`None`; the
    /// default is `"smart-turn-house"`): `[listen] smart_turn_model` (in the model directory
    /// when a bare name), else [`crate::audio::smart_turn::SMART_TURN_FILE`] in the model
    /// directory. Not checked.
    pub(crate) fn turn_model(&self) -> Result<Option<PathBuf>, SettingsError> {
        use crate::config::EndOfTurn;
        match self.config.listen.end_of_turn.unwrap_or_default() {
            EndOfTurn::Silence => Ok(None),
            EndOfTurn::SmartTurn | EndOfTurn::SmartTurnHouse => self
                .model_file_or(
                    self.config.listen.smart_turn_model.as_deref(),
                    crate::audio::smart_turn::SMART_TURN_FILE,
                )
                .map(Some),
        }
    }

    /// `[listen]` over [`crate::audio::listen::ListenConfig`]'s defaults, with the detector
    /// of [`vad_model`](Self::vad_model) (Silero on `[tts] onnxruntime`'s library).
    pub fn listen(&self) -> Result<crate::audio::listen::ListenConfig, SettingsError> {
        use crate::audio::listen::{ListenConfig, TurnModel, VadKind, TURN_PAUSE_MS};
        let l = &self.config.listen;
        let vad = match self.vad_model()? {
            None => VadKind::Energy,
            Some(model) => VadKind::Silero {
                model,
                ort_library: self.config.tts.onnxruntime.clone(),
            },
        };
        let end_of_turn = self.turn_model()?.map(|model| TurnModel {
            model,
            ort_library: self.config.tts.onnxruntime.clone(),
        });
        let mut c = ListenConfig {
            vad,
            ..Default::default()
        };
        let set_f = |v: &mut f32, o: Option<f32>| *v = o.unwrap_or(*v);
        let set_u = |v: &mut u32, o: Option<u32>| *v = o.unwrap_or(*v);
        set_f(&mut c.speech_threshold, l.speech_threshold);
        set_f(&mut c.threshold_db, l.threshold_db);
        set_f(&mut c.min_level_dbfs, l.min_level_dbfs);
        set_f(&mut c.echo_margin_db, l.echo_margin_db);
        set_u(&mut c.onset_ms, l.onset_ms);
        set_u(&mut c.preroll_ms, l.preroll_ms);
        set_u(&mut c.hangover_ms, l.hangover_ms);
        set_u(&mut c.early_ms, l.early_ms);
        // the end-of-turn model is asked at the pause, about that much silence or more; for
        // the house's requests only, at its own pause, whenever recognition starts
        let house_only =
            l.end_of_turn.unwrap_or_default() == crate::config::EndOfTurn::SmartTurnHouse;
        if let Some(model) = end_of_turn {
            match l.early_ms {
                _ if house_only => c = c.with_house_end_of_turn(model),
                Some(ms) if ms < TURN_PAUSE_MS => return Err(SettingsError::EarlyForTurnModel(ms)),
                _ => c = c.with_end_of_turn(model),
            }
        }
        set_u(&mut c.intent_end_ms, l.intent_end_ms);
        set_u(&mut c.phrase_end_ms, l.phrase_end_ms);
        set_u(&mut c.min_speech_ms, l.min_speech_ms);
        set_u(&mut c.max_utterance_ms, l.max_utterance_ms);
        // With wake words on, speech over a reply stops nothing by itself (only the wake word
        // or "stop" does), so it may start an utterance as soon as ordinary speech would: a
        // short "stop" must become one. Without them it is a barge-in, held to the longer time.
        if !self.wake_names().is_empty() {
            c.barge_in_ms = crate::audio::listen::WAKE_BARGE_IN_MS;
        }
        set_u(&mut c.barge_in_ms, l.barge_in_ms);
        Ok(c)
    }

    /// Whether echo cancellation runs: `[audio] echo_cancel`, else on exactly when hearth
    /// both listens to and speaks through sound devices (a WAV input hears nothing hearth
    /// plays; a WAV output plays nothing into the room).
    pub fn echo_cancel(&self, device_input: bool, device_output: bool) -> bool {
        self.config
            .audio
            .echo_cancel
            .unwrap_or(device_input && device_output)
    }

    /// The capture device's name: `--mic`, else `[audio] mic`. `None`: the default input.
    pub fn mic(&self) -> Option<&str> {
        self.flags
            .mic
            .as_deref()
            .or(self.config.audio.mic.as_deref())
    }

    /// The playback device's name: `--speaker`, else `[audio] speaker`. `None`: the
    /// default output.
    pub fn speaker(&self) -> Option<&str> {
        self.flags
            .speaker
            .as_deref()
            .or(self.config.audio.speaker.as_deref())
    }

    /// A sound device by name (`None` or `"default"`: the default device) with `[audio]
    /// buffer_ms`.
    pub fn device(&self, name: Option<&str>) -> crate::audio::DeviceSpec {
        use crate::audio::DeviceSpec;
        let mut spec = match name {
            None | Some("default") => DeviceSpec::default_device(),
            Some(n) => DeviceSpec::named(n.to_string()),
        };
        spec.buffer_ms = self.config.audio.buffer_ms;
        spec
    }

    /// Every model file and runtime library the settings in force load, for `hearth models
    /// pull` with no argument: the LLM, the whisper model (unless a server transcribes), the
    /// Piper voice and its `.onnx.json` (unless a server speaks), ONNX Runtime (found
    /// as it is loaded, else the model directory's), the VAD, the end-of-turn model; then the
    /// wake words' files. Not checked: a path may be missing (that is what pull is for).
    pub fn model_files(&self) -> Result<Vec<PathBuf>, SettingsError> {
        let mut files = Vec::new();
        match self.llm_model()? {
            Some(m) => files.push(m),
            None => {
                if let Some(source) = self.preset()?.model {
                    files.push(self.model_dir()?.join(source.file));
                }
            }
        }
        if let SttChoice::Child { model, .. } = self.stt()? {
            files.push(model);
        }
        // the Piper voice's files and where it is; a server's voice is the server's
        let beside = match self.voice()? {
            crate::tts::VoiceSource::Piper(voice) => {
                files.push(voice.model.clone());
                files.push(voice.config.clone());
                voice.model
            }
            crate::tts::VoiceSource::Server(_) => self.model_dir()?.join(crate::onnx::ORT_LIB_FILE),
        };
        let named = &self.config.tts.onnxruntime;
        files.push(match (self.onnx_runtime(&beside), named) {
            (Ok(found), _) => found,
            (Err(_), Some(named)) => named.clone(),
            (Err(_), None) => self.model_dir()?.join(crate::onnx::ORT_LIB_FILE),
        });
        files.extend(self.vad_model()?);
        files.extend(self.turn_model()?);
        if let Some(wake) = self.wake()? {
            files.extend(wake.files());
        }
        Ok(files)
    }

    /// The wake words' names as given (empty: none).
    fn wake_names(&self) -> Vec<String> {
        self.flags
            .wake
            .clone()
            .or_else(|| self.config.listen.wake.clone())
            .unwrap_or_else(|| vec![DEFAULT_WAKE_WORD.to_string()])
    }

    /// The wake words: `--wake`, else `[listen] wake`, else [`DEFAULT_WAKE_WORD`]; each a
    /// microWakeWord model name in the model directory or a `.tflite` path (its `.json`
    /// beside it), on TensorFlow Lite from the model directory; or `oww:NAME`, the
    /// openWakeWord classifier `openwakeword/NAME.onnx` of the model directory (or an `.onnx`
    /// path), on ONNX Runtime (CC BY-NC-SA 4.0 models, `hearth models pull oww:NAME`). `None`:
    /// no wake words, every utterance is a request. Not checked
    /// ([`crate::wake::WakeConfig::check`] does).
    pub fn wake(&self) -> Result<Option<crate::wake::WakeConfig>, SettingsError> {
        let names = self.wake_names();
        if names.is_empty() {
            return Ok(None);
        }
        let dir = self.model_dir()?;
        let models = names
            .iter()
            .map(|n| {
                if let Some(name) = n.strip_prefix("oww:") {
                    dir.join(crate::wake::oww_files::OWW_DIR)
                        .join(format!("{name}.onnx"))
                } else if n.ends_with(".tflite") || n.ends_with(".onnx") || n.contains('/') {
                    crate::models::in_dir(Path::new(n), dir)
                } else {
                    dir.join(format!("{n}.tflite"))
                }
            })
            .collect();
        Ok(Some(crate::wake::WakeConfig {
            library: dir.join(crate::wake::LIBRARY_NAME),
            models,
            cutoff: self.config.listen.wake_cutoff,
            denoise: self.config.listen.wake_denoise.unwrap_or(true),
            check_transcript: self.config.listen.wake_check.unwrap_or(false),
        }))
    }

    /// The sound when hearth is addressed (`[listen] earcon`, default the chime), loaded and
    /// checked; `None` for `"none"`.
    pub fn earcon(&self) -> Result<Option<crate::voice::Pcm>, SettingsError> {
        let earcon = self.config.listen.earcon.as_deref().map_or(
            crate::audio::earcon::Earcon::Chime,
            crate::audio::earcon::Earcon::parse,
        );
        earcon.load().map_err(SettingsError::Earcon)
    }

    /// The sound before an announcement or a timer ringing (`[audio] bell`, default the
    /// bell), loaded and checked; `None` for `"none"`.
    pub fn bell(&self) -> Result<Option<crate::voice::Pcm>, SettingsError> {
        let bell = self.config.audio.bell.as_deref().map_or(
            crate::audio::earcon::Earcon::Bell,
            crate::audio::earcon::Earcon::parse,
        );
        bell.load().map_err(SettingsError::Bell)
    }

    /// Every cue a voice pipeline plays ([`Settings::earcon`], [`Settings::bell`]).
    pub fn cues(&self) -> Result<crate::audio::earcon::Cues, SettingsError> {
        Ok(crate::audio::earcon::Cues {
            earcon: self.earcon()?,
            bell: self.bell()?,
        })
    }

    /// After a reply, how long a request needs no wake word: `[listen] follow_up_s`, else
    /// [`crate::pipeline::FOLLOW_UP`].
    pub fn follow_up(&self) -> std::time::Duration {
        self.config
            .listen
            .follow_up_s
            .map(std::time::Duration::from_secs_f32)
            .unwrap_or(crate::pipeline::FOLLOW_UP)
    }

    /// How long a conversation is kept without a turn: `[agent] conversation_idle_s`, else
    /// [`crate::pipeline::CONVERSATION_IDLE`].
    pub fn conversation_idle(&self) -> std::time::Duration {
        self.config
            .agent
            .conversation_idle_s
            .map(std::time::Duration::from_secs)
            .unwrap_or(crate::pipeline::CONVERSATION_IDLE)
    }

    /// The bounds on tools registered over D-Bus: `[bus]`'s keys, else
    /// [`ProviderLimits::default`](crate::tools::ProviderLimits).
    pub fn provider_limits(&self) -> crate::tools::ProviderLimits {
        let b = &self.config.bus;
        let d = crate::tools::ProviderLimits::default();
        crate::tools::ProviderLimits {
            tools: b.registered_tools_max.unwrap_or(d.tools),
            tools_per_caller: b.tools_per_caller_max.unwrap_or(d.tools_per_caller),
            description_chars: b.description_max_chars.unwrap_or(d.description_chars),
            schema_bytes: b.schema_max_bytes.unwrap_or(d.schema_bytes),
        }
    }

    /// Where the model runs: `[agent] engine`, llama.cpp in process by default, or the
    /// server of `[agent.openai]` (its URL, model, key file, timeouts and grammar; the
    /// context and the local model file are filled in from the text options at start).
    pub fn engine(&self) -> Result<EngineChoice, SettingsError> {
        use crate::config::EngineKind;
        use crate::llm::openai::OpenAiConfig;
        let agent = &self.config.agent;
        match (agent.engine.unwrap_or(EngineKind::Llama), &agent.openai) {
            (EngineKind::Llama, _) => Ok(EngineChoice::Llama),
            (EngineKind::OpenAi, Some(o)) => {
                let mut cfg = OpenAiConfig::new(o.url.trim());
                cfg.model = o.model.clone();
                cfg.api_key_file = o.api_key_file.clone();
                let secs = std::time::Duration::from_secs_f64;
                cfg.connect_timeout = o.connect_timeout_s.map_or(cfg.connect_timeout, secs);
                cfg.read_timeout = o.read_timeout_s.map_or(cfg.read_timeout, secs);
                cfg.grammar = o.grammar.unwrap_or_default();
                Ok(EngineChoice::OpenAi(cfg))
            }
            // the file's check refuses this; a configuration made in code may not have been
            (EngineKind::OpenAi, None) => Err(SettingsError::Config(ConfigError::Invalid {
                path: self.config_path.clone().unwrap_or_default(),
                section: "agent",
                key: "engine",
                value: "\"openai\"".into(),
                expected: "an [agent.openai] table naming the server: url = \"http://HOST:PORT\"",
            })),
        }
    }

    /// The text agent's options for `preset`: the tools directory, the model file, the
    /// context length (`--n-ctx`, else `[agent] n_ctx`, else [`TextOptions::new`]'s), the
    /// config's threads, GPU layers, history mode and intents, and, when `prompt_cache`, the
    /// on-disk KV cache (the model file is then located and checked now). The caller adds
    /// the backends and the event stream.
    /// Where the house's things are read from: Home Assistant (`[homeassistant]` with
    /// `discover`), and the `[mqtt]` broker's Zigbee2MQTT bridge and discovery.
    pub fn house(
        &self,
    ) -> Result<
        (
            Option<crate::house::HouseWatch>,
            Option<crate::house::MqttWatch>,
        ),
        SettingsError,
    > {
        let ha = match &self.config.homeassistant {
            Some(section) => crate::house::HouseWatch::from_config(section)?,
            None => None,
        };
        Ok((ha, crate::house::MqttWatch::from_config(&self.config)))
    }

    pub fn text_options(
        &self,
        preset: Preset,
        prompt_cache: bool,
    ) -> Result<TextOptions, SettingsError> {
        let agent = &self.config.agent;
        let mut opts = TextOptions::new(preset);
        opts.tools_dir = self.tools_dir();
        opts.model = self.llm_model()?;
        if let Some(n) = self.flags.n_ctx.or(agent.n_ctx) {
            opts.n_ctx = n;
        }
        opts.threads = agent.threads.map(|n| n as i32);
        opts.gpu_layers = agent.gpu_layers.unwrap_or(0);
        opts.history = agent.history.unwrap_or_default();
        opts.intents = agent.intents.unwrap_or(true);
        if let Some(n) = agent.history_tokens {
            opts.history_tokens = n;
        }
        if let Some(s) = agent.turn_budget_s {
            opts.turn_budget = std::time::Duration::from_secs_f64(s);
        }
        opts.engine = self.engine()?;
        (opts.house, opts.mqtt_house) = self.house()?;
        // the KV cache is the server's when the model runs elsewhere
        if prompt_cache && opts.engine == EngineChoice::Llama {
            let model = crate::supervisor::model_path(&opts)?;
            opts.prompt_cache = crate::supervisor::prompt_cache_path(&opts, &model);
            opts.model = Some(model);
        }
        Ok(opts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with_models(k: &str) -> Option<OsString> {
        (k == "HEARTH_MODEL_DIR").then(|| OsString::from("/models"))
    }

    fn settings(flags: Flags, config: Config) -> Settings {
        Settings::with_env(flags, config, None, env_with_models)
    }

    #[test]
    fn every_file_the_defaults_load_has_a_pull_name() {
        let mut config = Config::default();
        // every optional model on too
        config.listen.end_of_turn = Some(crate::config::EndOfTurn::SmartTurn);
        config.listen.wake = Some(vec!["okay_nabu".into(), "oww:alexa".into()]);
        let s = settings(Flags::default(), config);
        let files = s.model_files().unwrap();
        let dir = Path::new("/models");
        let named: Vec<_> = files
            .iter()
            .map(|f| (f, crate::models::pull_name(f, dir)))
            .collect();
        // a library found outside the model directory (this machine's) needs no pull
        for (f, name) in &named {
            assert!(
                name.is_some() || f.is_file(),
                "{} has no pull name",
                f.display()
            );
        }
        let names: Vec<_> = named.iter().filter_map(|(_, n)| n.as_deref()).collect();
        for want in [
            "qwen2.5-coder",
            "whisper:tiny.en",
            "wake:okay_nabu",
            "lib:tflite",
            "oww:alexa",
            "oww:features",
        ] {
            assert!(names.contains(&want), "{want} not in {names:?}");
        }
        for want in [
            "voice:en_US-joe-medium",
            "vad:silero",
            "turn:smart-turn-v3.2",
        ] {
            assert!(names.contains(&want), "{want} not in {names:?}");
        }
    }

    /// Keys `config/hearth.toml` shows with an example value, not the default (the default
    /// depends on the machine or on another key, or there is none): `section.key`.
    const EXAMPLES: [&str; 19] = [
        "agent.model",
        "agent.tools",
        "agent.threads",
        "listen.smart_turn_model",
        "listen.barge_in_ms", // 288 without wake words, 128 with them (the file says both)
        "listen.wake_cutoff", // each model's own: 0.85 is okay_nabu's
        "stt.model",
        "stt.server",
        "stt.prompt",
        "stt.threads",
        "tts.voice",
        "tts.server",
        "tts.onnxruntime",
        "tts.espeak_data",
        "tts.length_scale", // the voice's own, from its .onnx.json
        "bus.bus",
        "bus.trusted_uids",
        "gpio.chip",
        "audio.echo_cancel",
    ];

    /// `config/hearth.toml` with every key it shows in a comment (`# key = value`) set,
    /// but those of [`EXAMPLES`] and of sections it shows commented out (`# [mqtt]`).
    fn documented_defaults() -> (String, Vec<String>) {
        let text = include_str!("../config/hearth.toml");
        let (mut out, mut keys) = (String::new(), Vec::new());
        let mut section = String::new();
        for line in text.lines() {
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                section = name.to_string();
                out.push_str(line);
                out.push('\n');
                continue;
            }
            // `# [mqtt]`, `# [[satellite]]`, `# [agent.openai]`
            let optional = line
                .strip_prefix("# [")
                .and_then(|l| l.strip_suffix(']'))
                .map(|l| l.trim_start_matches('[').trim_end_matches(']'))
                .is_some_and(|l| l.split('.').all(is_key));
            if optional {
                section = String::new(); // an optional section: its keys are examples
                continue;
            }
            let shown = line
                .strip_prefix("# ")
                .filter(|l| l.split_once(" = ").is_some_and(|(k, _)| is_key(k)));
            let key = match shown
                .or(Some(line).filter(|l| l.split_once(" = ").is_some_and(|(k, _)| is_key(k))))
            {
                Some(l) => l,
                None => continue,
            };
            let name = key.split_once(" = ").map_or("", |(k, _)| k);
            let full = format!("{section}.{name}");
            if section.is_empty() || EXAMPLES.contains(&full.as_str()) {
                continue;
            }
            keys.push(full);
            out.push_str(key);
            out.push('\n');
        }
        (out, keys)
    }

    fn is_key(k: &str) -> bool {
        !k.is_empty() && k.chars().all(|c| c.is_ascii_lowercase() || c == '_')
    }

    /// What hearth makes of a configuration, every resolved setting that has a default.
    fn resolved(s: &Settings) -> Vec<String> {
        let preset = s.preset().unwrap();
        let mut text = s.text_options(preset, false).unwrap();
        text.model = None; // located in the model directory, which the test does not have
        vec![
            format!("preset: {:?}", s.preset_name()),
            format!("text: {text:?}"),
            format!("conversation_idle: {:?}", s.conversation_idle()),
            // no device named is the default device; no buffer, the default buffer
            format!(
                "devices: {} {} {}",
                s.mic().unwrap_or("default"),
                s.speaker().unwrap_or("default"),
                s.device(None).buffer_ms()
            ),
            format!("listen: {:?}", s.listen().map_err(|e| e.to_string())),
            format!("wake: {:?}", s.wake().map_err(|e| e.to_string())),
            format!("follow_up: {:?}", s.follow_up()),
            format!(
                "earcon: {:?}",
                s.earcon().map(|e| e.is_some()).map_err(|e| e.to_string())
            ),
            format!(
                "bell: {:?}",
                s.bell().map(|e| e.is_some()).map_err(|e| e.to_string())
            ),
            format!(
                "stt: {:?} {:?}",
                s.stt().map_err(|e| e.to_string()),
                s.stt_timeout()
            ),
            format!("voice: {:?}", s.voice().map_err(|e| e.to_string())),
            format!("providers: {:?}", s.provider_limits()),
        ]
    }

    #[test]
    fn the_documented_defaults_are_the_code_s() {
        let (text, keys) = documented_defaults();
        assert!(keys.len() >= 35, "only {} keys read: {keys:?}", keys.len());
        let documented: Config = toml::from_str(&text)
            .unwrap_or_else(|e| panic!("config/hearth.toml's defaults do not parse: {e}\n{text}"));
        let shown = resolved(&settings(Flags::default(), documented));
        let code = resolved(&settings(Flags::default(), Config::default()));
        for (shown, code) in shown.iter().zip(&code) {
            assert_eq!(
                shown, code,
                "config/hearth.toml shows a default the code does not have (keys read: {keys:?}); \
                 correct the file, or list the key in EXAMPLES if its value is an example"
            );
        }
    }

    #[test]
    fn the_engine_is_llama_cpp_unless_the_file_names_a_server() {
        let s = settings(Flags::default(), Config::default());
        assert_eq!(s.engine().unwrap(), EngineChoice::Llama);
        let text = "[agent]\nengine = \"openai\"\nn_ctx = 2048\n[agent.openai]\nurl = \"http://gpu-box:8080/v1\"\nmodel = \"qwen\"\napi_key_file = \"/etc/hearth/llm.key\"\nread_timeout_s = 30\ngrammar = \"llguidance\"\n";
        let config = Config::parse(text, Path::new("hearth.toml")).unwrap();
        let s = settings(Flags::default(), config);
        let EngineChoice::OpenAi(o) = s.engine().unwrap() else {
            panic!("not the remote engine")
        };
        assert_eq!(o.url, "http://gpu-box:8080/v1");
        assert_eq!(o.model.as_deref(), Some("qwen"));
        assert_eq!(o.api_key_file, Some(PathBuf::from("/etc/hearth/llm.key")));
        assert_eq!(o.read_timeout, std::time::Duration::from_secs(30));
        assert_eq!(o.connect_timeout, crate::llm::openai::CONNECT_TIMEOUT);
        assert_eq!(o.grammar, crate::config::RemoteGrammar::Llguidance);
        // no model file is looked for (the prompt cache is the server's)
        let opts = s.text_options(s.preset().unwrap(), true).unwrap();
        assert_eq!((opts.prompt_cache, opts.n_ctx), (None, 2048));
        assert!(matches!(opts.engine, EngineChoice::OpenAi(_)));
        // a configuration made in code without the table is refused, naming it
        let mut config = Config::default();
        config.agent.engine = Some(crate::config::EngineKind::OpenAi);
        let e = settings(Flags::default(), config).engine().unwrap_err();
        assert!(e.to_string().contains("[agent.openai]"), "{e}");
    }

    #[test]
    fn smart_turn_ends_the_houses_requests_unless_the_file_asks_for_silence() {
        use crate::audio::listen::TurnEnds;
        let listen = |toml_text: &str| {
            let config: Config = toml::from_str(toml_text).unwrap();
            settings(Flags::default(), config).listen().unwrap()
        };
        // by default: the model, asked about the house's requests only, at early_ms's pause
        let default = listen("");
        assert_eq!(default.turn_ends, TurnEnds::HouseRequests);
        assert_eq!(
            default.end_of_turn.map(|t| t.model),
            Some(PathBuf::from("/models").join(crate::audio::smart_turn::SMART_TURN_FILE))
        );
        assert_eq!(
            default.early_ms,
            crate::audio::listen::ListenConfig::default().early_ms
        );
        // the silence alone: no model
        let silence = listen("[listen]\nend_of_turn = \"silence\"\n");
        assert_eq!(silence.end_of_turn, None);
        let config: Config = toml::from_str("[listen]\nend_of_turn = \"smart-turn\"\n").unwrap();
        let turn = settings(Flags::default(), config)
            .listen()
            .unwrap()
            .end_of_turn;
        assert_eq!(
            turn.map(|t| t.model),
            Some(PathBuf::from("/models").join(crate::audio::smart_turn::SMART_TURN_FILE))
        );
    }

    #[test]
    fn with_smart_turn_recognition_starts_at_the_pause_it_hears() {
        use crate::audio::listen::TURN_PAUSE_MS;
        let listen = |toml_text: &str| {
            let config: Config = toml::from_str(toml_text).unwrap();
            settings(Flags::default(), config).listen()
        };
        assert!(listen("").unwrap().early_ms < TURN_PAUSE_MS);
        let silence = "[listen]\nend_of_turn = \"silence\"\n";
        assert!(listen(silence).unwrap().early_ms < TURN_PAUSE_MS);
        let turn = "[listen]\nend_of_turn = \"smart-turn\"\n";
        assert_eq!(listen(turn).unwrap().early_ms, TURN_PAUSE_MS);
        assert_eq!(
            listen(&format!("{turn}early_ms = 300\n")).unwrap().early_ms,
            300
        );
        // asked for below it, the model would never be asked: refused, naming the fix
        let e = listen(&format!("{turn}early_ms = 128\n")).unwrap_err();
        assert!(e.to_string().contains("early_ms = 128"), "{e}");
        assert!(e.to_string().contains("end_of_turn = \"silence\""), "{e}");
        // for the house's requests only, it is asked at its own pause: recognition keeps
        // early_ms, and its word is reported, not taken as the utterance's end
        let house =
            listen("[listen]\nend_of_turn = \"smart-turn-house\"\nearly_ms = 128\n").unwrap();
        assert_eq!(house.early_ms, 128);
        assert_eq!(
            house.turn_ends,
            crate::audio::listen::TurnEnds::HouseRequests
        );
        assert!(house.end_of_turn.is_some());
        assert_eq!(
            listen(turn).unwrap().turn_ends,
            crate::audio::listen::TurnEnds::Any
        );
    }

    #[test]
    fn echo_cancellation_is_on_for_devices_unless_the_file_says() {
        let mut config = Config::default();
        let s = settings(Flags::default(), config.clone());
        assert!(s.echo_cancel(true, true));
        // a WAV input hears nothing hearth plays; a WAV output plays nothing into the room
        assert!(!s.echo_cancel(false, true));
        assert!(!s.echo_cancel(true, false));
        assert!(!s.echo_cancel(false, false));
        config.audio.echo_cancel = Some(false);
        assert!(!settings(Flags::default(), config.clone()).echo_cancel(true, true));
        config.audio.echo_cancel = Some(true);
        assert!(settings(Flags::default(), config).echo_cancel(false, false));
        let parsed: Config = toml::from_str("[audio]\necho_cancel = false\n").unwrap();
        assert_eq!(parsed.audio.echo_cancel, Some(false));
    }

    #[test]
    fn the_flag_wins_over_the_file_over_the_default_preset() {
        let mut config = Config::default();
        assert_eq!(
            settings(Flags::default(), config.clone()).preset_name(),
            DEFAULT_PRESET
        );
        config.agent.preset = Some("qwen3".into());
        assert_eq!(
            settings(Flags::default(), config.clone()).preset_name(),
            "qwen3"
        );
        let flags = Flags {
            preset: Some("gemma".into()),
            ..Flags::default()
        };
        assert_eq!(settings(flags, config).preset_name(), "gemma");
    }

    #[test]
    fn bare_names_in_the_config_are_in_the_model_directory_flags_are_not() {
        let mut config = Config::default();
        config.stt.model = Some("ggml-base.en.bin".into());
        config.agent.model = Some("model-that-is-not-here.gguf".into());
        let s = settings(Flags::default(), config.clone());
        assert_eq!(
            s.whisper_model().unwrap(),
            PathBuf::from("/models/ggml-base.en.bin")
        );
        assert_eq!(
            s.llm_model().unwrap(),
            Some(PathBuf::from("/models/model-that-is-not-here.gguf"))
        );
        let flags = Flags {
            stt_model: Some("w.bin".into()),
            model: Some("m.gguf".into()),
            ..Flags::default()
        };
        let s = settings(flags, config);
        assert_eq!(s.whisper_model().unwrap(), PathBuf::from("w.bin"));
        assert_eq!(s.llm_model().unwrap(), Some(PathBuf::from("m.gguf")));
    }

    #[test]
    fn a_speech_model_name_is_its_file_in_the_model_directory() {
        let config: Config = toml::from_str("[stt]\nmodel = \"whisper:base.en-q8_0\"\n").unwrap();
        let s = settings(Flags::default(), config);
        assert_eq!(
            s.whisper_model().unwrap(),
            PathBuf::from("/models/ggml-base.en-q8_0.bin")
        );
        // the same on the command line, where a file is otherwise taken as it is
        let flags = Flags {
            stt_model: Some("whisper:small.en".into()),
            ..Flags::default()
        };
        assert_eq!(
            settings(flags, Config::default()).whisper_model().unwrap(),
            PathBuf::from("/models/ggml-small.en.bin")
        );
        // the entry's file name works as it always did
        let config: Config = toml::from_str("[stt]\nmodel = \"ggml-base.en.bin\"\n").unwrap();
        assert_eq!(
            settings(Flags::default(), config).whisper_model().unwrap(),
            PathBuf::from("/models/ggml-base.en.bin")
        );
        // an unknown name lists the known ones
        let config: Config = toml::from_str("[stt]\nmodel = \"whisper:huge\"\n").unwrap();
        let e = settings(Flags::default(), config)
            .whisper_model()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("whisper:huge") && e.contains("whisper:base.en"),
            "{e}"
        );
        // a missing catalogue file names its pull command
        let e = SettingsError::WhisperMissing("/models/ggml-base.en.bin".into()).to_string();
        assert!(e.contains("hearth models pull whisper:base.en`"), "{e}");
    }

    #[test]
    fn oww_names_are_openwakeword_models_beside_microwakeword_ones() {
        let mut config = Config::default();
        config.listen.wake = Some(vec!["okay_nabu".into(), "oww:alexa".into()]);
        let w = settings(Flags::default(), config).wake().unwrap().unwrap();
        assert_eq!(
            w.models,
            [
                PathBuf::from("/models/okay_nabu.tflite"),
                PathBuf::from("/models/openwakeword/alexa.onnx")
            ]
        );
        // the feature models beside the classifier, the TF Lite library for okay_nabu
        assert!(w
            .files()
            .contains(&PathBuf::from("/models/openwakeword/melspectrogram.onnx")));
        assert!(w.files().contains(&w.library));
    }

    #[test]
    fn the_stt_deadline_comes_from_the_file_or_the_default() {
        let mut config = Config::default();
        assert_eq!(
            settings(Flags::default(), config.clone()).stt_timeout(),
            crate::stt::UTTERANCE_TIMEOUT
        );
        config.stt.timeout_s = Some(12);
        assert_eq!(
            settings(Flags::default(), config).stt_timeout(),
            std::time::Duration::from_secs(12)
        );
    }

    #[test]
    fn a_model_on_the_command_line_means_the_child_whatever_the_file_says() {
        let mut config = Config::default();
        config.stt.server = Some("tcp://127.0.0.1:10300".into());
        let s = settings(Flags::default(), config.clone());
        assert_eq!(
            s.stt().unwrap(),
            SttChoice::Server("tcp://127.0.0.1:10300".into())
        );
        let flags = Flags {
            stt_model: Some("/w.bin".into()),
            ..Flags::default()
        };
        assert_eq!(
            settings(flags, config.clone()).stt().unwrap(),
            SttChoice::Child {
                model: "/w.bin".into(),
                threads: None
            }
        );
        let flags = Flags {
            stt_model: Some("/w.bin".into()),
            stt: Some("tcp://10.0.0.2:10300".into()),
            ..Flags::default()
        };
        assert_eq!(
            settings(flags, config).stt().unwrap(),
            SttChoice::Server("tcp://10.0.0.2:10300".into())
        );
    }

    #[test]
    fn a_tts_server_speaks_unless_the_command_line_names_a_piper_voice() {
        use crate::tts::{ServerConfig, VoiceSource};
        let mut config = Config::default();
        config.tts.server = Some("tcp://10.0.0.2:10200".into());
        config.tts.voice = Some("en_GB-alba-medium".into());
        assert_eq!(
            settings(Flags::default(), config.clone()).voice().unwrap(),
            VoiceSource::Server(ServerConfig {
                uri: "tcp://10.0.0.2:10200".into(),
                voice: Some("en_GB-alba-medium".into()),
            })
        );
        let flags = Flags {
            voice: Some("/voices/mine.onnx".into()),
            ..Flags::default()
        };
        match settings(flags, config).voice().unwrap() {
            VoiceSource::Piper(piper) => assert_eq!(piper.model, Path::new("/voices/mine.onnx")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn no_model_directory_is_an_error_naming_the_fix() {
        let mut config = Config::default();
        config.tts.voice = Some("voice.onnx".into());
        let s = Settings::with_env(Flags::default(), config, None, |_| None);
        let e = s.voice().unwrap_err().to_string();
        assert!(e.contains("HEARTH_MODEL_DIR"), "{e}");
    }

    #[test]
    fn a_missing_whisper_model_names_the_file_and_the_fix() {
        let flags = Flags {
            stt_model: Some("/nonexistent/ggml-tiny.en.bin".into()),
            ..Flags::default()
        };
        let s = settings(flags, Config::default());
        let SttChoice::Child { model, .. } = s.stt().unwrap() else {
            panic!("no server was named")
        };
        let e = SettingsError::WhisperMissing(model).to_string();
        assert!(
            e.contains("/nonexistent/ggml-tiny.en.bin")
                && e.contains("--stt-model")
                && e.contains("HEARTH_WHISPER_MODEL"),
            "{e}"
        );
    }

    #[test]
    fn a_bad_bus_flag_says_what_is_accepted() {
        assert_eq!(parse_bus("system").unwrap(), BusKind::System);
        let e = parse_bus("sesion").unwrap_err().to_string();
        assert_eq!(e, "--bus \"sesion\": use session, system or none");
    }
}
