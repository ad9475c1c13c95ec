//! Sound devices through cpal: choosing a host and a device by name, picking a stream
//! configuration, and the two audio callbacks.
//!
//! The callbacks never block and never allocate: the input callback converts samples to `f32`
//! into a preallocated [`rtrb`] ring (whole frames only; what does not fit is counted in
//! `dropped`), the output callback pulls from one through the playback
//! [`Render`] (Playback's `Renderer`). Both are built with the `audio` feature only;
//! without it opening a device is [`AudioError::NoDeviceSupport`].

/// The cpal host names a device name may start with ("alsa:default").
pub(crate) const HOSTS: [&str; 4] = ["alsa", "pulseaudio", "jack", "pipewire"];

/// Which sound device to open.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceSpec {
    /// cpal host by name ("alsa", "pulseaudio"; case-insensitive). `None`: cpal's default, which
    /// is PulseAudio (or PipeWire's pulse server) when one is reachable, else ALSA.
    pub host: Option<String>,
    /// Device by its id ("default", "hw:CARD=Device,DEV=0", "vsink.monitor"), its full id
    /// ("pulseaudio:vsink.monitor") or its description. `None`: the host's default device.
    pub name: Option<String>,
    /// Stream sample rate to ask for; `None` (or a rate the device lacks): the device's default.
    pub rate: Option<u32>,
    /// Channel count to ask for (e.g. 1 for a mic that the driver offers as mono and stereo);
    /// `None` (or a count the device lacks): the device's default. Capture downmixes anyway.
    pub channels: Option<u16>,
    /// Device buffer per callback in milliseconds (the output holds two). `None`: 20 ms. More
    /// survives a loaded machine without underruns, but a stop then takes up to twice as long
    /// to be heard.
    pub buffer_ms: Option<u32>,
}

/// What an output stream plays: at each callback, `frames` frames, `put(i, sample)` for
/// each (Playback's `Renderer`). Called in the audio callback: it never blocks and never
/// allocates.
pub(crate) trait Render: Send + 'static {
    fn render(&mut self, frames: usize, put: impl FnMut(usize, f32));
}

/// The device buffer asked for by default, ms (one callback's worth).
pub(crate) const DEFAULT_BUFFER_MS: u32 = 20;

impl DeviceSpec {
    /// The device buffer per callback to ask for, ms: [`DeviceSpec::buffer_ms`], else
    /// [`DEFAULT_BUFFER_MS`].
    pub fn buffer_ms(&self) -> u32 {
        self.buffer_ms.unwrap_or(DEFAULT_BUFFER_MS)
    }

    /// The default device of the default host.
    pub(crate) fn default_device() -> Self {
        Self::default()
    }

    /// A device by name, as a user writes it (`--mic`, `--speaker`): "HOST:NAME" picks the
    /// host when HOST is one of [`HOSTS`] ("alsa:hw:1,0", "pulseaudio:vsink.monitor"); any
    /// other name ("hw:1,0", "default", "vsink.monitor") is a device of the default host.
    pub fn named(name: impl Into<String>) -> Self {
        let name = name.into();
        let host = name.split_once(':').and_then(|(host, rest)| {
            let known = HOSTS.iter().find(|h| h.eq_ignore_ascii_case(host))?;
            Some((known.to_string(), rest.to_string()))
        });
        match host {
            Some((host, rest)) => DeviceSpec {
                host: Some(host),
                name: (!rest.is_empty()).then_some(rest),
                ..Self::default()
            },
            None => DeviceSpec {
                name: Some(name),
                ..Self::default()
            },
        }
    }
}

impl std::fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}",
            self.host.as_deref().unwrap_or("default-host"),
            self.name.as_deref().unwrap_or("default")
        )
    }
}

/// What was opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StreamInfo {
    /// The device, as "host:id".
    pub device: String,
    /// The stream's sample rate.
    pub rate: u32,
    /// The stream's channel count.
    pub channels: u16,
    /// The stream's sample format (e.g. "f32", "i16").
    pub format: String,
}

#[cfg(feature = "audio")]
pub(crate) use imp::device_names;
#[cfg(feature = "audio")]
pub(crate) use imp::{open_input, open_output};

#[cfg(not(feature = "audio"))]
pub(crate) use stub::device_names;
#[cfg(not(feature = "audio"))]
pub(crate) use stub::{open_input, open_output};

#[cfg(not(feature = "audio"))]
mod stub {
    use super::{DeviceSpec, Render, StreamInfo};
    use crate::audio::AudioError;
    use std::sync::atomic::AtomicU64;
    use std::sync::Arc;

    /// Stands in for `cpal::Stream` in builds without the `audio` feature (never made).
    pub(crate) enum Stream {}

    impl Drop for Stream {
        fn drop(&mut self) {
            match *self {}
        }
    }

    pub(crate) fn open_input(
        _spec: &DeviceSpec,
        _ring_secs: f32,
        _dropped: Arc<AtomicU64>,
    ) -> Result<(Stream, rtrb::Consumer<f32>, StreamInfo), AudioError> {
        Err(AudioError::NoDeviceSupport)
    }

    pub(crate) fn open_output<R: Render>(
        _spec: &DeviceSpec,
        _ring_secs: f32,
        _make: impl FnOnce(rtrb::Consumer<f32>, u32) -> R,
    ) -> Result<(Stream, rtrb::Producer<f32>, StreamInfo), AudioError> {
        Err(AudioError::NoDeviceSupport)
    }

    /// The names of the input (or output) devices of a host.
    pub(crate) fn device_names(
        _spec: &DeviceSpec,
        _input: bool,
    ) -> Result<Vec<String>, AudioError> {
        Err(AudioError::NoDeviceSupport)
    }
}

#[cfg(feature = "audio")]
mod imp {
    use std::str::FromStr;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
    use cpal::{FromSample, SampleFormat, SizedSample, SupportedStreamConfig};

    use super::{DeviceSpec, Render, StreamInfo};
    use crate::audio::AudioError;

    use cpal::Stream;

    /// `$build!(T)` for the stream's cpal sample type `T`; an unsupported format returns the
    /// error from the enclosing function.
    macro_rules! for_each_format {
        ($format:expr, $id:expr, $build:ident) => {
            match $format {
                SampleFormat::F32 => $build!(f32),
                SampleFormat::I16 => $build!(i16),
                SampleFormat::I32 => $build!(i32),
                SampleFormat::I24 => $build!(cpal::I24),
                SampleFormat::U16 => $build!(u16),
                SampleFormat::U8 => $build!(u8),
                SampleFormat::I8 => $build!(i8),
                SampleFormat::F64 => $build!(f64),
                other => {
                    return Err(AudioError::Stream {
                        device: $id,
                        reason: format!("unsupported sample format {other}"),
                    })
                }
            }
        };
    }

    /// A built stream, started; `direction` ("input", "output") names it in errors.
    fn started(
        built: Result<Stream, cpal::Error>,
        id: &str,
        config: &SupportedStreamConfig,
        direction: &str,
    ) -> Result<Stream, AudioError> {
        let stream = built.map_err(|e| AudioError::Stream {
            device: id.to_string(),
            reason: format!("cannot open the {direction} stream ({config:?}): {e}"),
        })?;
        stream.play().map_err(|e| AudioError::Stream {
            device: id.to_string(),
            reason: format!("cannot start the {direction} stream: {e}"),
        })?;
        Ok(stream)
    }

    /// How long `build_*_stream` may take before the device counts as unavailable.
    const OPEN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

    /// Sample formats the callbacks convert.
    const FORMATS: [SampleFormat; 8] = [
        SampleFormat::F32,
        SampleFormat::I16,
        SampleFormat::I32,
        SampleFormat::I24,
        SampleFormat::U16,
        SampleFormat::U8,
        SampleFormat::I8,
        SampleFormat::F64,
    ];

    fn host(spec: &DeviceSpec) -> Result<cpal::Host, AudioError> {
        let available = || {
            cpal::available_hosts()
                .iter()
                .map(|h| h.name().to_lowercase())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match &spec.host {
            None => Ok(cpal::default_host()),
            Some(name) => {
                let id = cpal::HostId::from_str(name)
                    .ok()
                    .filter(|id| cpal::available_hosts().contains(id))
                    .ok_or_else(|| AudioError::HostNotFound {
                        name: name.clone(),
                        available: available(),
                    })?;
                cpal::host_from_id(id).map_err(|e| AudioError::HostUnavailable {
                    host: id.name().to_lowercase(),
                    reason: e.to_string(),
                })
            }
        }
    }

    fn host_name(host: &cpal::Host) -> String {
        host.id().name().to_lowercase()
    }

    /// "id (description)" of a device, or what is known of it.
    fn label(device: &cpal::Device) -> String {
        let id = device.id().map(|i| i.id().to_string()).ok();
        let desc = device.description().map(|d| d.name().to_string()).ok();
        match (id, desc) {
            (Some(id), Some(desc)) if desc != id => format!("{id} ({desc})"),
            (Some(id), _) => id,
            (None, Some(desc)) => desc,
            (None, None) => device.to_string(),
        }
    }

    fn full_id(device: &cpal::Device) -> String {
        device
            .id()
            .map(|i| i.to_string())
            .unwrap_or_else(|_| device.to_string())
    }

    fn list(devices: &[cpal::Device]) -> String {
        if devices.is_empty() {
            return "none".into();
        }
        devices.iter().map(label).collect::<Vec<_>>().join(", ")
    }

    fn matches(device: &cpal::Device, name: &str) -> bool {
        if let Ok(id) = device.id() {
            if id.id() == name || id.to_string() == name {
                return true;
            }
        }
        if let Ok(d) = device.description() {
            if d.name() == name || d.name().eq_ignore_ascii_case(name) {
                return true;
            }
        }
        false
    }

    fn find(spec: &DeviceSpec, input: bool) -> Result<(cpal::Device, String), AudioError> {
        let host = host(spec)?;
        let host_label = host_name(&host);
        let direction = if input { "input" } else { "output" };
        let devices: Vec<cpal::Device> = if input {
            host.input_devices().map(|d| d.collect())
        } else {
            host.output_devices().map(|d| d.collect())
        }
        .map_err(|e| AudioError::HostUnavailable {
            host: host_label.clone(),
            reason: e.to_string(),
        })?;
        let device = match &spec.name {
            Some(name) => {
                let found = devices.iter().find(|d| matches(d, name)).cloned();
                // ALSA's "default" is not always among the enumerated devices
                let found = found.or_else(|| {
                    let default = if input {
                        host.default_input_device()
                    } else {
                        host.default_output_device()
                    };
                    default.filter(|d| matches(d, name))
                });
                found.ok_or_else(|| AudioError::DeviceNotFound {
                    direction,
                    name: name.clone(),
                    host: host_label.clone(),
                    available: list(&devices),
                })?
            }
            None => {
                let default = if input {
                    host.default_input_device()
                } else {
                    host.default_output_device()
                };
                default.ok_or_else(|| AudioError::NoDefaultDevice {
                    direction,
                    host: host_label.clone(),
                    available: list(&devices),
                })?
            }
        };
        let id = full_id(&device);
        Ok((device, id))
    }

    /// The device's default configuration, or one with the rate and channel count `spec` asks
    /// for if the device has it; always in a sample format the callbacks convert.
    fn choose_config(
        device: &cpal::Device,
        input: bool,
        spec: &DeviceSpec,
        label: &str,
    ) -> Result<SupportedStreamConfig, AudioError> {
        let stream_err = |reason: String| AudioError::Stream {
            device: label.to_string(),
            reason,
        };
        let (want_rate, want_channels) = (spec.rate, spec.channels);
        let default = if input {
            device.default_input_config()
        } else {
            device.default_output_config()
        };
        let default = default.map_err(|e| stream_err(format!("no default configuration: {e}")));
        if let Ok(d) = &default {
            if FORMATS.contains(&d.sample_format())
                && want_rate.is_none_or(|r| r == d.sample_rate())
                && want_channels.is_none_or(|c| c == d.channels())
            {
                return Ok(*d);
            }
        }
        let ranges: Vec<_> = if input {
            device.supported_input_configs().map(|r| r.collect())
        } else {
            device.supported_output_configs().map(|r| r.collect())
        }
        .map_err(|e| stream_err(format!("cannot list configurations: {e}")))?;
        let mut usable: Vec<_> = ranges
            .into_iter()
            .filter(|r| FORMATS.contains(&r.sample_format()))
            .collect();
        usable.sort_by(|a, b| a.cmp_default_heuristics(b));
        if want_rate.is_some() || want_channels.is_some() {
            let default_rate = default.as_ref().ok().map(|d| d.sample_rate());
            let found = usable.iter().rev().find(|r| {
                want_channels.is_none_or(|c| r.channels() == c)
                    && want_rate.is_none_or(|rate| r.contains_rate(rate))
            });
            if let Some(r) = found {
                let rate = want_rate
                    .or(default_rate.filter(|&d| r.contains_rate(d)))
                    .unwrap_or_else(|| {
                        (*r).try_with_standard_sample_rate()
                            .map(|c| c.sample_rate())
                            .unwrap_or(r.max_sample_rate())
                    });
                return Ok((*r).with_sample_rate(rate));
            }
            tracing::warn!(
                device = label,
                rate = ?want_rate,
                channels = ?want_channels,
                "the device has no stream with the asked rate/channels; using its default"
            );
        }
        if let Ok(d) = default {
            if FORMATS.contains(&d.sample_format()) {
                return Ok(d);
            }
        }
        usable
            .pop()
            .map(|r| {
                r.try_with_standard_sample_rate()
                    .unwrap_or_else(|| r.with_max_sample_rate())
            })
            .ok_or_else(|| {
                stream_err(
                    "no configuration in a sample format hearth converts (f32, i16, i32, i24, \
                     u16, u8, i8, f64)"
                        .into(),
                )
            })
    }

    /// A fixed buffer of about `secs` (clamped to what the device allows), so that the output
    /// holds little beyond the ring (a stop is heard at once, `Started` is when the sound goes
    /// out) and input arrives in small steps. PulseAudio's default would buffer ~2 s.
    fn buffer_size(config: &SupportedStreamConfig, secs: f32) -> cpal::BufferSize {
        let target = (config.sample_rate() as f32 * secs) as u32;
        match *config.buffer_size() {
            cpal::SupportedBufferSize::Range { min, max } if min <= max => {
                cpal::BufferSize::Fixed(target.clamp(min, max))
            }
            _ => cpal::BufferSize::Default,
        }
    }

    fn info(device: String, config: &SupportedStreamConfig) -> StreamInfo {
        StreamInfo {
            device,
            rate: config.sample_rate(),
            channels: config.channels(),
            format: config.sample_format().to_string(),
        }
    }

    fn input_callback<T>(
        mut ring: rtrb::Producer<f32>,
        channels: usize,
        dropped: Arc<AtomicU64>,
    ) -> impl FnMut(&[T], &cpal::InputCallbackInfo) + Send + 'static
    where
        T: SizedSample,
        f32: FromSample<T>,
    {
        move |data: &[T], _: &cpal::InputCallbackInfo| {
            // whole frames only, so the worker never loses the channel alignment
            let room = ring.slots() / channels * channels;
            let n = data.len().min(room);
            if n > 0 {
                if let Ok(chunk) = ring.write_chunk_uninit(n) {
                    chunk.fill_from_iter(data[..n].iter().map(|s| s.to_sample::<f32>()));
                }
            }
            if n < data.len() {
                dropped.fetch_add((data.len() - n) as u64, Ordering::Relaxed);
            }
        }
    }

    fn output_callback<T>(
        mut renderer: impl Render,
        channels: usize,
    ) -> impl FnMut(&mut [T], &cpal::OutputCallbackInfo) + Send + 'static
    where
        T: SizedSample + FromSample<f32>,
    {
        move |data: &mut [T], _: &cpal::OutputCallbackInfo| {
            renderer.render(data.len() / channels, |frame, s| {
                let v = T::from_sample(s);
                for out in &mut data[frame * channels..(frame + 1) * channels] {
                    *out = v;
                }
            });
        }
    }

    fn error_callback(device: String) -> impl FnMut(cpal::Error) + Send + 'static {
        // not the data callback: logging here is allowed
        move |e| tracing::error!(device = %device, error = %e, "audio stream error")
    }

    /// Opens an input stream and starts it. Its samples (interleaved `f32`, `channels` per
    /// frame) arrive in the returned ring, which holds `ring_secs` of audio; what does not fit
    /// is counted in `dropped`.
    pub(crate) fn open_input(
        spec: &DeviceSpec,
        ring_secs: f32,
        dropped: Arc<AtomicU64>,
    ) -> Result<(Stream, rtrb::Consumer<f32>, StreamInfo), AudioError> {
        let (device, id) = find(spec, true)?;
        let config = choose_config(&device, true, spec, &id)?;
        let info = info(id.clone(), &config);
        let channels = usize::from(config.channels().max(1));
        let capacity = ((config.sample_rate() as f32 * ring_secs) as usize).max(4096) * channels;
        let (producer, consumer) = rtrb::RingBuffer::new(capacity);
        let mut stream_config = config.config();
        stream_config.buffer_size = buffer_size(&config, spec.buffer_ms() as f32 / 1000.0);
        let err = error_callback(id.clone());
        macro_rules! build {
            ($t:ty) => {
                device.build_input_stream::<$t, _, _>(
                    stream_config,
                    input_callback::<$t>(producer, channels, dropped),
                    err,
                    Some(OPEN_TIMEOUT),
                )
            };
        }
        let stream = for_each_format!(config.sample_format(), id, build);
        let stream = started(stream, &id, &config, "input")?;
        Ok((stream, consumer, info))
    }

    /// Opens an output stream (mono samples from the ring go to every channel) and starts it.
    /// `make` builds the callback's renderer from the ring's consumer end and the rate.
    pub(crate) fn open_output<R: Render>(
        spec: &DeviceSpec,
        ring_secs: f32,
        make: impl FnOnce(rtrb::Consumer<f32>, u32) -> R,
    ) -> Result<(Stream, rtrb::Producer<f32>, StreamInfo), AudioError> {
        let (device, id) = find(spec, false)?;
        let config = choose_config(&device, false, spec, &id)?;
        let info = info(id.clone(), &config);
        let channels = usize::from(config.channels().max(1));
        let capacity = ((config.sample_rate() as f32 * ring_secs) as usize).max(4096);
        let (producer, consumer) = rtrb::RingBuffer::new(capacity);
        let renderer = make(consumer, config.sample_rate());
        let mut stream_config = config.config();
        stream_config.buffer_size = buffer_size(&config, spec.buffer_ms() as f32 / 1000.0);
        let err = error_callback(id.clone());
        macro_rules! build {
            ($t:ty) => {
                device.build_output_stream::<$t, _, _>(
                    stream_config,
                    output_callback::<$t>(renderer, channels),
                    err,
                    Some(OPEN_TIMEOUT),
                )
            };
        }
        let stream = for_each_format!(config.sample_format(), id, build);
        let stream = started(stream, &id, &config, "output")?;
        Ok((stream, producer, info))
    }

    /// The names of the input (or output) devices of a host, for `hearth doctor` and errors.
    pub(crate) fn device_names(spec: &DeviceSpec, input: bool) -> Result<Vec<String>, AudioError> {
        let host = host(spec)?;
        let devices: Vec<cpal::Device> = if input {
            host.input_devices().map(|d| d.collect())
        } else {
            host.output_devices().map(|d| d.collect())
        }
        .map_err(|e| AudioError::HostUnavailable {
            host: host_name(&host),
            reason: e.to_string(),
        })?;
        Ok(devices.iter().map(label).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_prefix_picks_the_host() {
        let spec = DeviceSpec::named("alsa:hw:1,0");
        assert_eq!(spec.host.as_deref(), Some("alsa"));
        assert_eq!(spec.name.as_deref(), Some("hw:1,0"));
        let spec = DeviceSpec::named("PulseAudio:vsink.monitor");
        assert_eq!(spec.host.as_deref(), Some("pulseaudio"));
        assert_eq!(spec.name.as_deref(), Some("vsink.monitor"));
        // the host's default device
        assert_eq!(DeviceSpec::named("alsa:").name, None);
        // not a host: a device name of the default host
        let spec = DeviceSpec::named("hw:CARD=Device,DEV=0");
        assert_eq!(spec.host, None);
        assert_eq!(spec.name.as_deref(), Some("hw:CARD=Device,DEV=0"));
        assert_eq!(
            DeviceSpec::named("default").name.as_deref(),
            Some("default")
        );
    }
}
