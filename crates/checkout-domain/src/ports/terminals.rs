//! The registry of merchant terminals.

use async_trait::async_trait;

use crate::terminal::Terminal;
use crate::values::TerminalNumber;

/// Looks up provisioned terminals.
#[async_trait]
pub trait TerminalDirectory: Send + Sync {
    /// The terminal with this number, active or not; `None` when it was never provisioned.
    async fn get_terminal(&self, number: &TerminalNumber) -> anyhow::Result<Option<Terminal>>;
}
