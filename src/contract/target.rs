//! Target types and dependency relationships of the v1 contract.

/// Edge labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Relationship {
    Supporting,
    Downstream,
    Path,
    Gateway,
    Router,
}

impl Relationship {
    /// Every label.
    pub const ALL: [Relationship; 5] = [
        Relationship::Supporting,
        Relationship::Downstream,
        Relationship::Path,
        Relationship::Gateway,
        Relationship::Router,
    ];

    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Relationship::Supporting => "supporting",
            Relationship::Downstream => "downstream",
            Relationship::Path => "path",
            Relationship::Gateway => "gateway",
            Relationship::Router => "router",
        }
    }
}

/// Target types of the v1 contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum TargetType {
    Agent,
    MultiAgent,
    A2a,
    Mcp,
    Tool,
    Model,
    Llm,
    Http,
    Api,
    VectorStore,
    Database,
    Runtime,
    Gateway,
    Router,
    Custom,
}

impl TargetType {
    /// Every type, in the contract's order.
    pub const ALL: [TargetType; 15] = [
        TargetType::Agent,
        TargetType::MultiAgent,
        TargetType::A2a,
        TargetType::Mcp,
        TargetType::Tool,
        TargetType::Model,
        TargetType::Llm,
        TargetType::Http,
        TargetType::Api,
        TargetType::VectorStore,
        TargetType::Database,
        TargetType::Runtime,
        TargetType::Gateway,
        TargetType::Router,
        TargetType::Custom,
    ];

    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetType::Agent => "agent",
            TargetType::MultiAgent => "multi-agent",
            TargetType::A2a => "a2a",
            TargetType::Mcp => "mcp",
            TargetType::Tool => "tool",
            TargetType::Model => "model",
            TargetType::Llm => "llm",
            TargetType::Http => "http",
            TargetType::Api => "api",
            TargetType::VectorStore => "vector-store",
            TargetType::Database => "database",
            TargetType::Runtime => "runtime",
            TargetType::Gateway => "gateway",
            TargetType::Router => "router",
            TargetType::Custom => "custom",
        }
    }

    /// The types the HTTP adapter checks, which alone may carry an `http` section.
    pub const HTTP_FAMILY: [TargetType; 4] = [
        TargetType::Http,
        TargetType::Api,
        TargetType::Gateway,
        TargetType::Router,
    ];

    /// Every type an adapter of this build checks: the HTTP family, then `mcp`.
    pub const CHECKED: [TargetType; 5] = [
        TargetType::Http,
        TargetType::Api,
        TargetType::Gateway,
        TargetType::Router,
        TargetType::Mcp,
    ];

    /// Whether the HTTP adapter checks this type.
    pub fn is_http_family(self) -> bool {
        TargetType::HTTP_FAMILY.contains(&self)
    }

    /// Names of `types`, joined by `sep` (`http, api, gateway`), for messages.
    pub fn names(types: &[TargetType], sep: &str) -> String {
        types
            .iter()
            .map(|t| t.as_str())
            .collect::<Vec<_>>()
            .join(sep)
    }
}
