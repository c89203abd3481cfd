// A kura auditor component in JavaScript.
//
// audit() gets an artifact (a markdown note written from a source) and the
// citations to check; it returns findings, the citations it used and how
// many nodes it saw. This starting point counts list items as nodes and
// reports a list item that cites nothing (no "(L12)" or "(L3-L7)").

const CITE = /\(L(\d+)(?:-L?(\d+))?\)/g;

export function audit(input) {
  const findings = [];
  let cited = [];
  let nodes = 0;
  input.artifact.split('\n').forEach((line, i) => {
    const item = line.trim();
    if (!item.startsWith('- ') && !item.startsWith('* ')) return;
    nodes++;
    const refs = [...item.matchAll(CITE)];
    if (refs.length === 0) {
      findings.push({ kind: 'rootless-node', message: 'a node that cites no source line', nodeId: undefined, line: i + 1 });
    }
    for (const m of refs) {
      const start = Number(m[1]);
      cited.push({ startLine: start, endLine: Number(m[2] ?? m[1]) });
    }
  });
  if (input.citedRanges !== undefined) cited = input.citedRanges;
  return { findings, citedRanges: cited, nodeCount: nodes };
}
