//! The one current-thread tokio runtime a fuzz target's async checks run on, built once per
//! process (the Wyoming targets: `wyoming_read`, `wyoming_write`).

use std::sync::OnceLock;

use tokio::runtime::Runtime;

pub fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a current-thread runtime")
    })
}
