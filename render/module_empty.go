package render

import "github.com/designbridge/caddy-designbridge/design"

// emptyBlock is the editor's placeholder for an empty column: nothing in
// HTML or plain text.
type emptyBlock struct{ noText }

var emptyKind = kind{
	name:   design.KindEmpty,
	decode: func(*design.Value) (block, error) { return emptyBlock{}, nil },
}

func (emptyBlock) html(*emailWriter, *design.Module) {}
