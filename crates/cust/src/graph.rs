//! CUDA graphs: work queued on a stream once, captured, and replayed with one launch.
//!
//! Each kernel launched on a stream costs the host a driver call and the GPU a launch
//! latency; a graph replays a whole sequence (kernels, copies, event waits) with one call
//! (CUDA C Programming Guide, "CUDA Graphs").
//!
//! ```no_run
//! # use cust::prelude::*;
//! # fn main() -> CudaResult<()> {
//! # let _ctx = cust::quick_init()?;
//! let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
//! let graph = stream.capture(|s| {
//!     // Queue work on `s` as usual: launches, async copies. Nothing runs yet.
//!     Ok(())
//! })?;
//! graph.launch()?; // runs the captured work on `stream`, as often as wanted
//! stream.synchronize()?;
//! # Ok(())
//! # }
//! ```

use crate::{
    backend,
    error::{CudaError, CudaResult},
    event::{Event, EventFlags},
    stream::Stream,
};
use std::{fmt, marker::PhantomData};

/// A captured, instantiated graph, replayed on the stream it was captured on
/// ([`Stream::capture`]). It holds the device addresses of every buffer the capture used, so
/// it borrows them as the capture's closure did (`'a`): no buffer can be freed, and none that
/// the captured work writes can be read or changed on the host, while the graph exists.
/// Dropping it waits for its replays. Not `Sync`: the driver does not synchronise access to
/// a graph.
pub struct Graph<'a> {
    inner: Box<dyn backend::Graph>,
    stream: Stream,
    borrows: PhantomData<&'a mut ()>,
}

impl fmt::Debug for Graph<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph").finish_non_exhaustive()
    }
}

impl Drop for Graph<'_> {
    /// Waits for the stream, so that every replay has finished before the graph's borrows of
    /// its buffers end.
    fn drop(&mut self) {
        // An error here is the replays' own, already reported by whatever waits next.
        let _ = self.stream.synchronize();
    }
}

impl Graph<'_> {
    /// Queues one replay of the captured work on the capturing stream.
    ///
    /// # Errors
    /// A driver error (e.g. a kernel of the previous replay failed).
    pub fn launch(&self) -> CudaResult<()> {
        self.inner.launch()
    }

    /// Uploads the graph's resources to the device now, so that the first
    /// [`launch`](Graph::launch) does not pay for them.
    ///
    /// # Errors
    /// A driver error.
    pub fn upload(&self) -> CudaResult<()> {
        self.inner.upload()
    }

    /// The stream the graph replays on.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }
}

impl Stream {
    /// Captures the work `record` queues on this stream into a [`Graph`] instead of running
    /// it (thread-local capture mode). Queue the work on the stream passed to `record`, and
    /// do nothing there that waits for the GPU (synchronising, host copies of results):
    /// those calls fail during a capture. First waits for all work queued on the context;
    /// while the capture is open, cudarc's cross-stream ordering of buffers is paused for the
    /// whole context, so other threads should not queue work on it meanwhile.
    ///
    /// # Errors
    /// - `record`'s error (the capture is ended and dropped first);
    /// - [`CudaError::NoGraph`] if the driver ended the capture without a graph (a capture
    ///   of nothing gives a graph that does nothing);
    /// - a driver error: e.g. `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED` on a context's
    ///   default stream, which cannot be captured (use [`Stream::new`]). The CPU emulator's
    ///   streams capture the same way and report the same errors: launches, device and
    ///   pinned copies and memsets are recorded and replayed in order; synchronising,
    ///   allocating or copying pageable host memory on a capturing stream is refused.
    pub fn capture<'a>(
        &self,
        record: impl FnOnce(&Stream) -> CudaResult<()> + 'a,
    ) -> CudaResult<Graph<'a>> {
        self.capture_as("CUDA graph capture", record)
    }

    /// [`Stream::capture`], naming the capture `operation` where it cannot be done (the
    /// emulator).
    fn capture_as<'a>(
        &self,
        operation: &'static str,
        record: impl FnOnce(&Stream) -> CudaResult<()> + 'a,
    ) -> CudaResult<Graph<'a>> {
        let mut record = Some(record);
        let inner = self
            .queue()
            .capture(operation, &mut || match record.take() {
                Some(record) => record(self),
                None => Ok(()),
            })?;
        Ok(Graph {
            inner,
            stream: self.clone(),
            borrows: PhantomData,
        })
    }
}

/// Most streams a [`ComputeGraph`] captures its independent branches on.
const MAX_BRANCH_STREAMS: usize = 8;

/// A compute graph: named nodes, each declaring the nodes whose results it reads (its
/// inputs), ordered by those dependencies and built once into a CUDA [`Graph`] in which each
/// node waits for its inputs only, so independent branches may run concurrently.
///
/// The nodes are declared first, as data; the work of every node is then queued by one
/// closure, called once per node in dependency order with the node's name and the stream to
/// queue on. One closure rather than one per node lets it borrow each buffer once, mutably
/// where a node writes it, which Rust would refuse across several closures alive together.
///
/// ```no_run
/// # use cust::{graph::ComputeGraph, prelude::*};
/// # fn main() -> CudaResult<()> {
/// # let _ctx = cust::quick_init()?;
/// let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
/// let mut dag = ComputeGraph::new();
/// dag.node("sum", &["left", "right"])?; // declared before its inputs: order comes from them
/// dag.node("left", &[])?;
/// dag.node("right", &[])?;
/// assert_eq!(dag.order()?, ["left", "right", "sum"]);
/// let graph = dag.build(&stream, |node, s| {
///     match node {
///         "left" => { /* launch on `s` */ }
///         "right" => { /* launch on `s`, concurrently with "left" */ }
///         _ => { /* "sum": after both */ }
///     }
///     Ok(())
/// })?;
/// graph.launch()?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct ComputeGraph {
    nodes: Vec<NodeDecl>,
}

#[derive(Clone, Debug)]
struct NodeDecl {
    name: String,
    inputs: Vec<String>,
}

/// One node of a resolved [`ComputeGraph`]: its declaration index, its inputs' positions in
/// the order, and the stream it is captured on.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Step {
    node: usize,
    inputs: Vec<usize>,
    lane: usize,
}

impl ComputeGraph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares node `name`, which reads the results of the nodes named in `inputs`. Inputs
    /// may be declared later; they are resolved by [`order`](Self::order) and
    /// [`build`](Self::build).
    ///
    /// # Errors
    /// [`CudaError::GraphSpec`] if `name` is empty or already declared, or if `inputs` names
    /// a node twice or names `name` itself.
    pub fn node(&mut self, name: &str, inputs: &[&str]) -> CudaResult<&mut Self> {
        if name.is_empty() {
            return Err(CudaError::GraphSpec(
                "a node's name must not be empty".into(),
            ));
        }
        if self.nodes.iter().any(|n| n.name == name) {
            return Err(CudaError::GraphSpec(format!(
                "node `{name}` is declared twice; node names must be unique"
            )));
        }
        for (i, input) in inputs.iter().enumerate() {
            if *input == name {
                return Err(CudaError::GraphSpec(format!(
                    "node `{name}` lists itself as an input"
                )));
            }
            if inputs[..i].contains(input) {
                return Err(CudaError::GraphSpec(format!(
                    "node `{name}` lists input `{input}` twice"
                )));
            }
        }
        self.nodes.push(NodeDecl {
            name: name.to_owned(),
            inputs: inputs.iter().map(|s| (*s).to_owned()).collect(),
        });
        Ok(self)
    }

    /// Number of declared nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether no node is declared.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node names in dependency order: every node after all of its inputs, and otherwise
    /// in declaration order (Kahn's algorithm, taking the earliest-declared ready node).
    ///
    /// # Errors
    /// [`CudaError::GraphSpec`] naming the node and the unknown input, or the nodes of a
    /// cycle.
    pub fn order(&self) -> CudaResult<Vec<&str>> {
        Ok(self
            .plan(1)?
            .iter()
            .map(|step| self.nodes[step.node].name.as_str())
            .collect())
    }

    /// Resolves inputs, orders the nodes and gives each a lane (stream index below `lanes`):
    /// a node continues its first input's lane when it is that input's first consumer, and
    /// otherwise takes the least-used lane, so chains stay on one stream and independent
    /// branches spread over several.
    fn plan(&self, lanes: usize) -> CudaResult<Vec<Step>> {
        let n = self.nodes.len();
        let index = |name: &str| self.nodes.iter().position(|d| d.name == name);
        let mut inputs = Vec::with_capacity(n);
        for decl in &self.nodes {
            let mut ids = Vec::with_capacity(decl.inputs.len());
            for input in &decl.inputs {
                ids.push(index(input).ok_or_else(|| {
                    CudaError::GraphSpec(format!(
                        "node `{}` reads `{input}`, which is not a node (declared: {})",
                        decl.name,
                        self.names()
                    ))
                })?);
            }
            inputs.push(ids);
        }
        let mut waiting: Vec<usize> = inputs.iter().map(Vec::len).collect();
        let mut consumers = vec![Vec::new(); n];
        for (node, ids) in inputs.iter().enumerate() {
            for &i in ids {
                consumers[i].push(node);
            }
        }
        let mut position = vec![usize::MAX; n];
        let mut lane_of = vec![0; n];
        let mut lane_load = vec![0usize; lanes.max(1)];
        let mut continued = vec![false; n];
        let mut steps: Vec<Step> = Vec::with_capacity(n);
        let mut ready: std::collections::BTreeSet<usize> =
            (0..n).filter(|&i| waiting[i] == 0).collect();
        while let Some(node) = ready.pop_first() {
            let lane = match inputs[node].first() {
                Some(&first) if !continued[first] => {
                    continued[first] = true;
                    lane_of[first]
                }
                _ => (0..lane_load.len())
                    .min_by_key(|&l| lane_load[l])
                    .unwrap_or(0),
            };
            lane_load[lane] += 1;
            lane_of[node] = lane;
            position[node] = steps.len();
            steps.push(Step {
                node,
                inputs: inputs[node].iter().map(|&i| position[i]).collect(),
                lane,
            });
            for &c in &consumers[node] {
                waiting[c] -= 1;
                if waiting[c] == 0 {
                    ready.insert(c);
                }
            }
        }
        if steps.len() < n {
            let stuck: Vec<&str> = (0..n)
                .filter(|&i| position[i] == usize::MAX)
                .map(|i| self.nodes[i].name.as_str())
                .collect();
            return Err(CudaError::GraphSpec(format!(
                "the inputs of nodes {} form a cycle (or depend on one); a node may only read \
                 nodes that do not read it back",
                stuck.join(", ")
            )));
        }
        Ok(steps)
    }

    fn names(&self) -> String {
        let names: Vec<&str> = self.nodes.iter().map(|d| d.name.as_str()).collect();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    }

    /// Queues every node's work on `stream` alone, in dependency order, without a graph:
    /// the same work as [`build`](Self::build) then [`Graph::launch`], launched call by call.
    ///
    /// # Errors
    /// [`CudaError::GraphSpec`] (see [`order`](Self::order)), or `record`'s error.
    pub fn queue(
        &self,
        stream: &Stream,
        mut record: impl FnMut(&str, &Stream) -> CudaResult<()>,
    ) -> CudaResult<()> {
        for step in self.plan(1)? {
            record(&self.nodes[step.node].name, stream)?;
        }
        Ok(())
    }

    /// Captures the graph into a CUDA [`Graph`] replayed on `stream`. `record` is called once
    /// per node, in dependency order, to queue that node's work on the stream it is given
    /// (and only there); the capture makes each node wait for its inputs through events, and
    /// runs independent branches on up to 8 streams, so the graph keeps only the declared
    /// dependencies. The rules of [`Stream::capture`] apply.
    ///
    /// # Errors
    /// [`CudaError::GraphSpec`] (see [`order`](Self::order)); `record`'s error; a driver
    /// error (e.g. `stream` is a context's default stream, which cannot be captured).
    pub fn build<'a>(
        &self,
        stream: &Stream,
        mut record: impl FnMut(&str, &Stream) -> CudaResult<()> + 'a,
    ) -> CudaResult<Graph<'a>> {
        let steps = self.plan(MAX_BRANCH_STREAMS)?;
        let lanes = steps.iter().map(|s| s.lane + 1).max().unwrap_or(1);
        let names: Vec<String> = steps
            .iter()
            .map(|s| self.nodes[s.node].name.clone())
            .collect();
        // Streams and events are made before the capture: creating them is not work on a
        // stream, and keeping the capture to launches and waits keeps it simple to reason
        // about.
        let ctx = stream.context();
        let mut streams = vec![stream.clone()];
        for _ in 1..lanes {
            let branch = ctx
                .backend()
                .new_stream(None, "creating a compute graph's branch stream")?;
            streams.push(Stream::from_parts(ctx.clone(), branch, 0));
        }
        let new_event = || Event::new_in(&ctx, EventFlags::DISABLE_TIMING);
        let fork = new_event()?;
        let done = steps
            .iter()
            .map(|_| new_event())
            .collect::<CudaResult<Vec<_>>>()?;
        stream.capture_as("CUDA graphs (compute graph capture)", move |origin| {
            // Branch streams join the capture by waiting on an event recorded in it.
            fork.record(origin)?;
            for s in &streams[1..] {
                s.wait_event(&fork)?;
            }
            for (i, step) in steps.iter().enumerate() {
                let s = &streams[step.lane];
                for &input in &step.inputs {
                    if steps[input].lane != step.lane {
                        s.wait_event(&done[input])?;
                    }
                }
                record(&names[i], s)?;
                done[i].record(s)?;
            }
            // The capture ends on `origin`: every branch must rejoin it.
            for (i, step) in steps.iter().enumerate() {
                if step.lane != 0 {
                    origin.wait_event(&done[i])?;
                }
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dag(spec: &[(&str, &[&str])]) -> ComputeGraph {
        let mut g = ComputeGraph::new();
        for (name, inputs) in spec {
            g.node(name, inputs).unwrap();
        }
        g
    }

    fn spec_error(r: CudaResult<impl fmt::Debug>) -> String {
        match r {
            Err(CudaError::GraphSpec(m)) => m,
            other => panic!("expected a GraphSpec error, got {other:?}"),
        }
    }

    #[test]
    fn order_puts_every_node_after_its_inputs_and_keeps_declaration_order_otherwise() {
        let g = dag(&[
            ("sum", &["left", "right"]),
            ("right", &["source"]),
            ("left", &["source"]),
            ("source", &[]),
            ("free", &[]),
        ]);
        // Ready at first: source, free; source is declared first. Then right and left are
        // ready, and sum (declared first of all) as soon as both ran.
        assert_eq!(
            g.order().unwrap(),
            ["source", "right", "left", "sum", "free"]
        );
        // The declaration of inputs after their reader changes nothing.
        let g = dag(&[("b", &["a"]), ("c", &["b"]), ("a", &[])]);
        assert_eq!(g.order().unwrap(), ["a", "b", "c"]);
    }

    #[test]
    fn chains_keep_one_lane_and_independent_branches_spread() {
        // Four chains of three, then a join of their ends.
        let mut g = ComputeGraph::new();
        for c in 0..4 {
            g.node(&format!("c{c}.0"), &[]).unwrap();
            for k in 1..3 {
                g.node(&format!("c{c}.{k}"), &[&format!("c{c}.{}", k - 1)])
                    .unwrap();
            }
        }
        g.node("join", &["c0.2", "c1.2", "c2.2", "c3.2"]).unwrap();
        let steps = g.plan(8).unwrap();
        let lane = |name: &str| {
            steps
                .iter()
                .find(|s| g.nodes[s.node].name == name)
                .unwrap()
                .lane
        };
        for c in 0..4 {
            let l = lane(&format!("c{c}.0"));
            assert!((1..3).all(|k| lane(&format!("c{c}.{k}")) == l));
        }
        let mut heads: Vec<usize> = (0..4).map(|c| lane(&format!("c{c}.0"))).collect();
        heads.sort_unstable();
        heads.dedup();
        assert_eq!(heads.len(), 4, "independent chains share a lane");
        assert_eq!(lane("join"), lane("c0.2"));
        // One lane: everything on it.
        assert!(g.plan(1).unwrap().iter().all(|s| s.lane == 0));
        // Inputs point at earlier steps.
        for (i, s) in steps.iter().enumerate() {
            assert!(s.inputs.iter().all(|&p| p < i));
        }
    }

    #[test]
    fn a_diamond_shares_its_fork_between_two_lanes() {
        let g = dag(&[("a", &[]), ("b", &["a"]), ("c", &["a"]), ("d", &["b", "c"])]);
        let steps = g.plan(8).unwrap();
        let lanes: Vec<usize> = steps.iter().map(|s| s.lane).collect();
        assert_eq!(lanes[0], lanes[1], "b continues a's lane");
        assert_ne!(lanes[1], lanes[2], "c runs beside b");
        assert_eq!(lanes[3], lanes[1], "d continues b's lane");
        assert_eq!(steps[3].inputs, [1, 2]);
    }

    #[test]
    fn bad_declarations_name_the_node_and_what_is_allowed() {
        let mut g = ComputeGraph::new();
        g.node("a", &[]).unwrap();
        assert!(spec_error(g.node("a", &[]).map(|_| ())).contains("`a` is declared twice"));
        assert!(spec_error(g.node("b", &["b"]).map(|_| ())).contains("lists itself"));
        assert!(spec_error(g.node("b", &["a", "a"]).map(|_| ())).contains("input `a` twice"));
        assert!(spec_error(g.node("", &[]).map(|_| ())).contains("empty"));
        assert_eq!(g.len(), 1, "rejected nodes are not added");

        let g = dag(&[("a", &[]), ("b", &["x"])]);
        let m = spec_error(g.order());
        assert!(
            m.contains("`b` reads `x`, which is not a node (declared: a, b)"),
            "{m}"
        );

        let g = dag(&[
            ("a", &[]),
            ("b", &["a", "d"]),
            ("c", &["b"]),
            ("d", &["c"]),
            ("e", &["d"]),
        ]);
        let m = spec_error(g.order());
        assert!(m.contains("nodes b, c, d, e form a cycle"), "{m}");
    }

    #[test]
    fn an_empty_graph_has_an_empty_order() {
        assert!(ComputeGraph::new().order().unwrap().is_empty());
        assert!(ComputeGraph::new().is_empty());
    }
}
