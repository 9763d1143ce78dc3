package report

import (
	"encoding/json"
	"fmt"
	"os"
)

// EncodeJSON is the results.json form: everything in the Report,
// including every raw sample, indented for diffing two runs.
func EncodeJSON(r Report) ([]byte, error) {
	if r.SchemaVersion == 0 {
		r.SchemaVersion = SchemaVersion
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ReadJSON reads a results.json back, for comparing runs. A file of
// schema version 1 (before schema_version existed) is read too: its raw
// samples are what this version summarises, so every summary is
// recomputed from them, and its CPU per op (then in µs) is replaced.
// A newer schema than this package knows is an error.
func ReadJSON(path string) (Report, error) {
	var r Report
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case r.SchemaVersion > SchemaVersion:
		return r, fmt.Errorf("%s: schema version %d, newer than this knitbench reads (%d)", path, r.SchemaVersion, SchemaVersion)
	case r.SchemaVersion < SchemaVersion:
		if len(r.Suites) == 0 && r.Machine.GOOS == "" {
			return r, fmt.Errorf("%s: not a knitbench results.json", path)
		}
		for i := range r.Suites {
			r.Suites[i].Summarize()
		}
	}
	return r, nil
}
