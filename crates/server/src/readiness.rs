//! Whether a request can be served now. The port answers from the start, while the engine
//! thread loads the weights and compiles its kernels; until then, after an engine failure
//! and while shutting down, `/health` and the generation endpoints answer 503 with the reason,
//! so a load balancer or a readiness probe sends traffic only to a replica that can take it.

use std::sync::Mutex;

use crate::error::ApiError;

#[derive(Debug, Clone, PartialEq)]
pub enum EngineState {
    /// What start-up is doing ("loading the model").
    Loading(String),
    Ready {
        vocab_size: usize,
    },
    /// The engine cannot serve any more: why.
    Failed(String),
    /// Shutting down: queued and running requests finish, no new ones are taken.
    Stopping,
}

pub struct Readiness {
    state: Mutex<EngineState>,
}

impl Default for Readiness {
    fn default() -> Self {
        Self {
            state: Mutex::new(EngineState::Loading("starting the engine".into())),
        }
    }
}

impl Readiness {
    pub fn state(&self) -> EngineState {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Failed and Stopping are final: a load that finishes after the shutdown began, or a
    /// late error of the stopping engine, does not undo them. Only stopping replaces a failure.
    fn set(&self, next: EngineState) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let is_final = matches!(*state, EngineState::Failed(_) | EngineState::Stopping);
        if !is_final || next == EngineState::Stopping {
            *state = next;
        }
    }

    pub fn loading(&self, what: impl Into<String>) {
        self.set(EngineState::Loading(what.into()));
    }

    pub fn ready(&self, vocab_size: usize) {
        self.set(EngineState::Ready { vocab_size });
    }

    pub fn fail(&self, why: impl Into<String>) {
        self.set(EngineState::Failed(why.into()));
    }

    pub fn stopping(&self) {
        self.set(EngineState::Stopping);
    }

    /// The vocabulary size when a request can be served, else the 503 to answer.
    pub fn check(&self) -> Result<usize, ApiError> {
        match self.state() {
            EngineState::Ready { vocab_size } => Ok(vocab_size),
            EngineState::Loading(what) => Err(ApiError::not_ready(
                "engine_loading",
                format!("The model is not ready yet: {what}."),
            )),
            EngineState::Failed(why) => Err(ApiError::not_ready(
                "engine_failed",
                format!("The engine failed: {why}."),
            )),
            EngineState::Stopping => Err(ApiError::shutting_down()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serves_only_when_ready_and_a_failure_sticks() {
        let r = Readiness::default();
        r.loading("loading weights");
        let e = r.check().unwrap_err();
        assert_eq!((e.status.as_u16(), e.code), (503, Some("engine_loading")));
        assert!(e.message.contains("loading weights"), "{}", e.message);
        r.ready(300);
        assert_eq!(r.check(), Ok(300));
        r.fail("CUDA error 700");
        let e = r.check().unwrap_err();
        assert_eq!((e.status.as_u16(), e.code), (503, Some("engine_failed")));
        assert!(e.message.contains("CUDA error 700"));
        r.ready(300);
        assert!(r.check().is_err(), "a failed engine stays failed");
        r.stopping();
        r.fail("the engine thread stopped");
        r.ready(300);
        assert_eq!(r.state(), EngineState::Stopping);
    }
}
