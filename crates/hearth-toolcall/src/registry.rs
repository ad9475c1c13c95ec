//! The detector registry: every wire format by name, plus `register_detector`.

use std::sync::{Arc, OnceLock, RwLock};

use super::detector::Detector;
use super::detectors;

/// Errors naming detectors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("unknown tool-call parser {name:?}; valid names: {}", valid.join(", "))]
    Unknown { name: String, valid: Vec<String> },
    #[error("a tool-call parser named {0:?} is already registered")]
    Duplicate(String),
    #[error("a tool-call parser needs a name made of letters, digits and '_' (got {0:?})")]
    BadName(String),
    #[error("the parser list is empty: name at least one parser, or use \"auto\"")]
    Empty,
}

/// A set of detectors in priority order.
#[derive(Clone)]
pub struct DetectorRegistry {
    detectors: Vec<Arc<dyn Detector>>,
}

impl std::fmt::Debug for DetectorRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl DetectorRegistry {
    /// Every built-in detector.
    pub fn builtin() -> Self {
        DetectorRegistry {
            detectors: detectors::builtin(),
        }
    }

    /// Add a detector. Its name must be new.
    pub fn register(&mut self, detector: Arc<dyn Detector>) -> Result<(), RegistryError> {
        let name = detector.name();
        if name.is_empty()
            || !name
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
        {
            return Err(RegistryError::BadName(name.to_string()));
        }
        if self.get(name).is_some() {
            return Err(RegistryError::Duplicate(name.to_string()));
        }
        self.detectors.push(detector);
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Detector>> {
        self.detectors.iter().find(|d| d.name() == name).cloned()
    }

    pub fn names(&self) -> Vec<String> {
        self.detectors
            .iter()
            .map(|d| d.name().to_string())
            .collect()
    }

    pub fn all(&self) -> &[Arc<dyn Detector>] {
        &self.detectors
    }

    /// Resolve a chain of names (in priority order). `auto` expands to every registered
    /// detector. An unknown name is an error listing the valid names, never a silent skip.
    pub fn resolve<S: AsRef<str>>(
        &self,
        names: &[S],
    ) -> Result<Vec<Arc<dyn Detector>>, RegistryError> {
        if names.is_empty() {
            return Err(RegistryError::Empty);
        }
        let mut out: Vec<Arc<dyn Detector>> = Vec::new();
        for n in names {
            let n = n.as_ref().trim();
            if n == "auto" {
                for d in &self.detectors {
                    if !out.iter().any(|o| o.name() == d.name()) {
                        out.push(d.clone());
                    }
                }
                continue;
            }
            let d = self.get(n).ok_or_else(|| RegistryError::Unknown {
                name: n.to_string(),
                valid: std::iter::once("auto".to_string())
                    .chain(self.names())
                    .collect(),
            })?;
            if !out.iter().any(|o| o.name() == d.name()) {
                out.push(d);
            }
        }
        Ok(out)
    }
}

fn global() -> &'static RwLock<DetectorRegistry> {
    static GLOBAL: OnceLock<RwLock<DetectorRegistry>> = OnceLock::new();
    GLOBAL.get_or_init(|| RwLock::new(DetectorRegistry::builtin()))
}

/// Add a detector to the process-wide registry, so presets and `--parsers` can name it.
pub fn register_detector(detector: impl Detector + 'static) -> Result<(), RegistryError> {
    let mut reg = global()
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    reg.register(Arc::new(detector))
}

/// A snapshot of the process-wide registry (built-ins plus registered detectors).
pub fn registry() -> DetectorRegistry {
    global()
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone()
}
