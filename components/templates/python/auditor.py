"""A kura auditor component in Python.

audit() gets an artifact (a markdown note written from a source) and the
citations to check; it returns findings, the citations it used and how
many nodes it saw. This starting point counts list items as nodes and
reports a list item that cites nothing (no "(L12)" or "(L3-L7)").
"""

import re

import wit_world
from wit_world.imports import types

CITE = re.compile(r"\(L(\d+)(?:-L?(\d+))?\)")


class WitWorld(wit_world.WitWorld):
    def audit(self, input: types.AuditInput) -> types.AuditReport:
        findings = []
        cited = []
        nodes = 0
        for n, line in enumerate(input.artifact.splitlines(), start=1):
            item = line.strip()
            if not item.startswith(("- ", "* ")):
                continue
            nodes += 1
            refs = CITE.findall(item)
            if not refs:
                findings.append(
                    types.Finding(types.FindingKind.ROOTLESS_NODE, "a node that cites no source line", None, n)
                )
            for start, end in refs:
                cited.append(types.LineRange(int(start), int(end or start)))
        if input.cited_ranges is not None:
            cited = input.cited_ranges
        return types.AuditReport(findings, cited, nodes)
