//! The registry of merchant terminals.

use async_trait::async_trait;

use crate::terminal::Terminal;
use crate::values::TerminalNumber;

/// Looks up provisioned terminals.
#[async_trait]
pub trait TerminalDirectory: Send + Sync {
    /// The terminal with this number, active or not; `None` when it was never provisioned.
    async fn get_terminal(&self, number: &TerminalNumber) -> anyhow::Result<Option<Terminal>>;

    /// The terminal as an earlier read of this directory saw it, if it was active then,
    /// without reading it now (a cache); `None` when there is none to give.
    ///
    /// MAY be stale: a caller MUST use it only for a create inserted with
    /// [`insert_for_terminal`](crate::ports::SessionRepository::insert_for_terminal), which
    /// checks it, and MUST decide any refusal on [`get_terminal`](Self::get_terminal). An
    /// implementation that keeps such a cache MUST forget a terminal whose guarded insert found
    /// it changed. The default keeps none.
    async fn recent_terminal(&self, number: &TerminalNumber) -> anyhow::Result<Option<Terminal>> {
        let _ = number;
        Ok(None)
    }
}
