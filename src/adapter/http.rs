//! The HTTP adapter (`http`, `api`, `gateway`, `router`) — stub; being written.

use crate::adapter::{Adapter, Attempt, TargetContext, TargetRun};
use crate::result::{Dimension, Observation, Status};

/// HEAD/GET probes of an HTTP endpoint.
pub struct HttpAdapter;

impl Adapter for HttpAdapter {
    fn dimensions(&self) -> &'static [Dimension] {
        &[
            Dimension::Reachability,
            Dimension::Authentication,
            Dimension::Protocol,
            Dimension::Functional,
        ]
    }

    fn start(&self, ctx: TargetContext) -> Box<dyn TargetRun> {
        Box::new(HttpRun { _ctx: ctx })
    }
}

struct HttpRun {
    _ctx: TargetContext,
}

impl TargetRun for HttpRun {
    fn configure(&mut self) -> Observation {
        Observation::healthy()
    }

    fn check(&mut self, _dim: Dimension, _attempt: &Attempt) -> Observation {
        Observation::new(Status::Unknown)
    }
}
