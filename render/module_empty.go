package render

import "github.com/designbridge/caddy-designbridge/design"

// moduleEmpty renders nothing: the editor's placeholder for an empty column.
func (w *emailWriter) moduleEmpty(m *design.Module) {}
