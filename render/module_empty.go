package render

import "github.com/designbridge/caddy-designbridge/design"

// moduleEmpty renders nothing: the editor's placeholder for an empty column.
func (w *emailWriter) moduleEmpty(*design.Module, *design.Value) {}

// emptyKind is the editor's placeholder: nothing in HTML or plain text.
var emptyKind = kind{
	name: design.KindEmpty,
	html: (*emailWriter).moduleEmpty,
}
