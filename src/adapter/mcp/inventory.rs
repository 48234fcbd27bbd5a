//! Inventories and requirements: every advertised `tools`, `resources` and `prompts`
//! inventory listed page by page, its entries validated, and the configured requirements
//! matched against it.
//!
//! Only inventories the server advertises are listed, all at once (see [`list`]); the order
//! tools, resources, prompts decides which failure is reported. Pages follow `nextCursor` (a repeated cursor is a loop); identities are tool and
//! prompt `name`s and resource `uri`s, each a non-blank string and never repeated; every
//! entry needs a non-blank `name`, and every tool an object `inputSchema`. Limits: 100 pages
//! and 10,000 entries per inventory (the transport bounds each response to 1 MiB). Over a
//! limit is inconclusive (UNKNOWN); a malformed entry is UNHEALTHY. In the modern era over
//! HTTP, a tool with invalid `x-mcp-header` annotations is excluded before the duplicate
//! check. Passive checks only list: they never read resources, get prompts or call tools.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::era::Era;
use super::failure::McpError;
use super::param_headers::{self, Exclusion, ParamBinding};
use super::result_shape;
use super::schema;
use super::session::Session;
use super::transport::{Reply, TransportError};
use crate::config::McpOptions;
use crate::result::Key;
use crate::result::reason::{Limit, Malformed};
use crate::result::{Evidence, Fact};
use crate::runtime::Attempt;

/// Pages listed per inventory at most.
pub const MAX_PAGES: usize = 100;
/// Entries per inventory at most.
pub const MAX_ENTRIES: usize = 10_000;

/// Which inventories a server advertises (capability keys present).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Advertised {
    /// `capabilities.tools` is present.
    pub tools: bool,
    /// `capabilities.resources` is present.
    pub resources: bool,
    /// `capabilities.prompts` is present.
    pub prompts: bool,
}

impl Advertised {
    /// Reads a capabilities object whose every value must be an object.
    pub fn from_capabilities(capabilities: &Map<String, Value>) -> Result<Advertised, McpError> {
        if !capabilities.values().all(Value::is_object) {
            return Err(McpError::Malformed(Malformed::Result(
                "capability is not an object",
            )));
        }
        Ok(Advertised {
            tools: capabilities.contains_key("tools"),
            resources: capabilities.contains_key("resources"),
            prompts: capabilities.contains_key("prompts"),
        })
    }
}

/// One discovered tool, kept for the functional check.
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    /// The tool's name (server text: matched, never printed).
    pub name: String,
    /// The tool's `annotations`, if any.
    pub annotations: Option<Value>,
    /// The tool's input schema (an object schema).
    pub input_schema: Value,
    /// The tool's `outputSchema`, if it declares one (`null` counts as none).
    pub output_schema: Option<Value>,
    /// Its `x-mcp-header` bindings (modern HTTP only; empty otherwise).
    pub bindings: Vec<ParamBinding>,
}

/// Everything the server advertises. `None` marks an unadvertised inventory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Inventory {
    /// Tools, unless unadvertised.
    pub tools: Option<Vec<Tool>>,
    /// Resource URIs, unless unadvertised.
    pub resources: Option<Vec<String>>,
    /// Prompt names, unless unadvertised.
    pub prompts: Option<Vec<String>>,
    /// Tools excluded for invalid header annotations, with the reason (names are server
    /// text: matched against the configuration, never printed).
    pub excluded: Vec<(String, Exclusion)>,
}

impl Inventory {
    /// Records inventory counts: `tools_count`, `resources_count`, `prompts_count` for each
    /// listed inventory and `tools_excluded` when tools were excluded.
    pub fn record(&self, evidence: &mut Evidence) {
        let count = |n: usize| Fact::Int(i64::try_from(n).unwrap_or(i64::MAX));
        if let Some(tools) = &self.tools {
            evidence.set(Key::ToolsCount, count(tools.len()));
        }
        if let Some(resources) = &self.resources {
            evidence.set(Key::ResourcesCount, count(resources.len()));
        }
        if let Some(prompts) = &self.prompts {
            evidence.set(Key::PromptsCount, count(prompts.len()));
        }
        if !self.excluded.is_empty() {
            evidence.set(Key::ToolsExcluded, count(self.excluded.len()));
        }
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Tools,
    Resources,
    Prompts,
}

impl Kind {
    fn method(self) -> &'static str {
        match self {
            Kind::Tools => "tools/list",
            Kind::Resources => "resources/list",
            Kind::Prompts => "prompts/list",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Kind::Tools => "tools",
            Kind::Resources => "resources",
            Kind::Prompts => "prompts",
        }
    }
}

/// Lists every advertised inventory. `header_rules` applies the `x-mcp-header` exclusion
/// (modern era over HTTP).
///
/// The inventories are independent, so their pages go out in rounds: the first page of each
/// at once, then the next page of each that has one ([`Session::request_all`]: over HTTP each
/// on its own connection of the run, over stdio several ids in flight). Each inventory's pages
/// stay in order, and at most one request per inventory is in flight. The outcome is the one
/// a listing in order would have: the first inventory (tools, resources, prompts) that fails
/// decides, so once one fails, those after it are no longer listed, and those before it go on.
pub fn list(
    session: &mut Session,
    era: Era,
    advertised: Advertised,
    header_rules: bool,
    attempt: &Attempt,
) -> Result<Inventory, McpError> {
    let kinds = [
        (Kind::Tools, advertised.tools),
        (Kind::Resources, advertised.resources),
        (Kind::Prompts, advertised.prompts),
    ];
    let mut listings: Vec<Listing> = kinds
        .iter()
        .filter(|(_, listed)| *listed)
        .map(|(kind, _)| Listing::new(*kind))
        .collect();
    let mut found = Found {
        header_rules,
        inventory: Inventory::default(),
    };
    loop {
        let decided = listings
            .iter()
            .position(Listing::failed)
            .unwrap_or(listings.len());
        let due: Vec<usize> = (0..decided).filter(|&i| listings[i].wants_page()).collect();
        if due.is_empty() {
            break;
        }
        let replies = {
            let calls: Vec<(&'static str, &str)> = due
                .iter()
                .map(|&i| (listings[i].kind.method(), listings[i].members.as_str()))
                .collect();
            session.request_all(&calls, era, attempt)
        };
        for (&i, reply) in due.iter().zip(replies) {
            listings[i].take(reply, era, &mut found);
        }
    }
    for listing in listings {
        match listing.state {
            State::Failed(failure) => {
                session.blame(listing.kind.method());
                return Err(failure);
            }
            State::Paging | State::Done => {
                let inventory = &mut found.inventory;
                match listing.kind {
                    Kind::Tools => {
                        inventory.tools.get_or_insert_with(Vec::new);
                    }
                    Kind::Resources => {
                        inventory.resources.get_or_insert_with(Vec::new);
                    }
                    Kind::Prompts => {
                        inventory.prompts.get_or_insert_with(Vec::new);
                    }
                }
            }
        }
    }
    Ok(found.inventory)
}

/// What the listed pages have yielded so far.
struct Found {
    header_rules: bool,
    inventory: Inventory,
}

impl Found {
    /// Validates one entry of `kind` and keeps it; returns its identity, or `None` when the
    /// entry was excluded.
    fn accept(
        &mut self,
        kind: Kind,
        mut entry: Map<String, Value>,
    ) -> Result<Option<String>, McpError> {
        let inventory = &mut self.inventory;
        match kind {
            Kind::Tools => {
                let name = identity(&entry, "name", "tool name")?;
                let input_schema = entry.remove("inputSchema").unwrap_or(Value::Null);
                if !schema::is_object_schema(&input_schema) {
                    return Err(McpError::Malformed(Malformed::Result(
                        "tool inputSchema is not an object schema",
                    )));
                }
                let bindings = if self.header_rules {
                    match param_headers::bindings(&input_schema) {
                        Ok(bindings) => bindings,
                        Err(why) => {
                            inventory.excluded.push((name, why));
                            return Ok(None);
                        }
                    }
                } else {
                    Vec::new()
                };
                inventory.tools.get_or_insert_with(Vec::new).push(Tool {
                    name: name.clone(),
                    annotations: entry.remove("annotations"),
                    input_schema,
                    output_schema: entry.remove("outputSchema").filter(|v| !v.is_null()),
                    bindings,
                });
                Ok(Some(name))
            }
            Kind::Resources => {
                identity(&entry, "name", "resource name")?;
                let uri = identity(&entry, "uri", "resource uri")?;
                Ok(Some(listed(&mut inventory.resources, uri)))
            }
            Kind::Prompts => {
                let name = identity(&entry, "name", "prompt name")?;
                Ok(Some(listed(&mut inventory.prompts, name)))
            }
        }
    }
}

/// Adds `identity` to a listed inventory (created by its first entry) and returns it.
fn listed(list: &mut Option<Vec<String>>, identity: String) -> String {
    list.get_or_insert_with(Vec::new).push(identity.clone());
    identity
}

/// A member that must be a non-blank string.
fn identity(entry: &Map<String, Value>, key: &str, what: &'static str) -> Result<String, McpError> {
    match entry.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        _ => Err(McpError::Malformed(Malformed::Result(what))),
    }
}

/// Where one inventory's listing stands.
enum State {
    /// Another page is due (`Listing::members` holds its cursor).
    Paging,
    /// The last page was listed.
    Done,
    /// The listing failed.
    Failed(McpError),
}

/// One inventory's listing: its pages follow `nextCursor` (a repeated cursor is a loop);
/// identities are never repeated; 100 pages and 10,000 entries at most.
struct Listing {
    kind: Kind,
    /// The params members of the next page's request (empty, or its cursor).
    members: String,
    cursors: HashSet<String>,
    identities: HashSet<String>,
    entries: usize,
    pages: usize,
    state: State,
}

impl Listing {
    fn new(kind: Kind) -> Listing {
        Listing {
            kind,
            members: String::new(),
            cursors: HashSet::new(),
            identities: HashSet::new(),
            entries: 0,
            pages: 0,
            state: State::Paging,
        }
    }

    fn wants_page(&self) -> bool {
        matches!(self.state, State::Paging)
    }

    fn failed(&self) -> bool {
        matches!(self.state, State::Failed(_))
    }

    /// Takes the answer to this listing's request for its next page.
    fn take(&mut self, reply: Result<Reply, TransportError>, era: Era, found: &mut Found) {
        self.state = match reply
            .map_err(McpError::from)
            .and_then(|reply| self.page(&reply, era, found))
        {
            Ok(true) => State::Paging,
            Ok(false) => State::Done,
            Err(failure) => State::Failed(failure),
        };
    }

    /// Reads one page; `true` when another one is due.
    fn page(&mut self, reply: &Reply, era: Era, found: &mut Found) -> Result<bool, McpError> {
        self.pages += 1;
        let mut page = result_shape::object(&reply.result)?;
        if era == Era::Modern {
            result_shape::check_result_type(&page)?;
        }
        let Some(Value::Array(items)) = page.remove(self.kind.key()) else {
            return Err(McpError::Malformed(Malformed::Result(
                "inventory is not an array",
            )));
        };
        self.entries = self.entries.saturating_add(items.len());
        if self.entries > MAX_ENTRIES {
            return Err(McpError::Limit(Limit::Entries));
        }
        for item in items {
            let Value::Object(entry) = item else {
                return Err(McpError::Malformed(Malformed::Result(
                    "inventory entry is not an object",
                )));
            };
            if let Some(id) = found.accept(self.kind, entry)? {
                if !self.identities.insert(id) {
                    return Err(McpError::Malformed(Malformed::Result(
                        "duplicate inventory identity",
                    )));
                }
            }
        }
        match page.remove("nextCursor") {
            None | Some(Value::Null) => Ok(false),
            Some(Value::String(next)) => {
                self.members.clear();
                self.members.push_str("\"cursor\":");
                self.members
                    .push_str(&Value::String(next.clone()).to_string());
                if !self.cursors.insert(next) {
                    return Err(McpError::Limit(Limit::RepeatedCursor));
                }
                if self.pages >= MAX_PAGES {
                    return Err(McpError::Limit(Limit::Pages));
                }
                Ok(true)
            }
            Some(_) => Err(McpError::Malformed(Malformed::Result(
                "nextCursor is not a string",
            ))),
        }
    }
}

/// The configured requirements an inventory does not meet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Missing {
    /// Required tool names not advertised (or excluded).
    pub tools: Vec<String>,
    /// Required resource URIs not advertised.
    pub resources: Vec<String>,
    /// Required prompt names not advertised.
    pub prompts: Vec<String>,
    /// Required tools that exist but were excluded for invalid header annotations.
    pub excluded: Vec<String>,
    /// Why the first of them was excluded.
    pub reason: Option<Exclusion>,
}

impl Missing {
    /// Whether every requirement is met.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.resources.is_empty() && self.prompts.is_empty()
    }

    /// Records `missing_tools`, `missing_resources`, `missing_prompts`, `excluded_tools`
    /// (configured names only) and `exclusion_reason` (our words).
    pub fn record(&self, evidence: &mut Evidence) {
        for (key, names) in [
            (Key::MissingTools, &self.tools),
            (Key::MissingResources, &self.resources),
            (Key::MissingPrompts, &self.prompts),
            (Key::ExcludedTools, &self.excluded),
        ] {
            if !names.is_empty() {
                evidence.set(key, Fact::ConfigList(names.clone()));
            }
        }
        if let Some(reason) = self.reason {
            evidence.set(Key::ExclusionReason, Fact::Word(reason.as_str()));
        }
    }
}

/// Matches the configured requirements: tool and prompt names exactly, resources by URI.
/// A requirement on an unadvertised inventory is missing.
pub fn missing(inventory: &Inventory, options: &McpOptions) -> Missing {
    let absent = |required: &[String], present: &dyn Fn(&str) -> bool| -> Vec<String> {
        required.iter().filter(|r| !present(r)).cloned().collect()
    };
    let tools = absent(&options.required_tools, &|name| {
        inventory
            .tools
            .as_ref()
            .is_some_and(|tools| tools.iter().any(|t| t.name == name))
    });
    let resources = absent(&options.required_resources, &|uri| {
        inventory
            .resources
            .as_ref()
            .is_some_and(|r| r.iter().any(|u| u == uri))
    });
    let prompts = absent(&options.required_prompts, &|name| {
        inventory
            .prompts
            .as_ref()
            .is_some_and(|p| p.iter().any(|n| n == name))
    });
    let mut excluded = Vec::new();
    let mut reason = None;
    for name in &tools {
        if let Some((_, why)) = inventory.excluded.iter().find(|(n, _)| n == name) {
            excluded.push(name.clone());
            reason.get_or_insert(*why);
        }
    }
    Missing {
        tools,
        resources,
        prompts,
        excluded,
        reason,
    }
}
