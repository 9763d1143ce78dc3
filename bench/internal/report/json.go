package report

import (
	"encoding/json"
	"os"
)

// EncodeJSON is the results.json form: everything in the Report,
// including every raw sample, indented for diffing two runs.
func EncodeJSON(r Report) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ReadJSON reads a results.json back, for comparing runs.
func ReadJSON(path string) (Report, error) {
	var r Report
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	err = json.Unmarshal(b, &r)
	return r, err
}
