package corpus

import (
	"path/filepath"

	"github.com/kubecause/kubecause/exporter/causes"
)

// DataDir is the directory of the corpus (corpus/tuning.yaml, corpus/heldback.yaml, the blind
// rounds) and of the
// real node's messages (real-node.yaml), relative to the repository root.
const DataDir = "exporter/causes/testdata"

// Page renders docs/causes.md: the table's reference (runbook links prefixed with runbookDir),
// its scores on the corpus and the real node's messages, read from dataDir (DataDir seen from
// the caller's working directory).
func Page(t *causes.Table, runbookDir, dataDir string) ([]byte, error) {
	tuning, err := Load(filepath.Join(dataDir, "corpus", "tuning.yaml"))
	if err != nil {
		return nil, err
	}
	heldBack, err := Load(filepath.Join(dataDir, "corpus", "heldback.yaml"))
	if err != nil {
		return nil, err
	}
	var blinds [][]Line
	for _, r := range blindRounds {
		lines, err := Load(filepath.Join(dataDir, "corpus", r.file))
		if err != nil {
			return nil, err
		}
		blinds = append(blinds, lines)
	}
	rn, err := LoadRealNode(filepath.Join(dataDir, "real-node.yaml"))
	if err != nil {
		return nil, err
	}
	invs, err := LoadInventory(dataDir)
	if err != nil {
		return nil, err
	}
	doc := ReferenceMarkdown(t, runbookDir)
	doc = append(doc, InventoryMarkdown(t, invs)...)
	doc = append(doc, ScoresMarkdown(t, tuning, heldBack, blinds)...)
	return append(doc, RealNodeMarkdown(t, rn)...), nil
}
