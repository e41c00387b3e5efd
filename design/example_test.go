package design_test

import (
	"errors"
	"fmt"

	"github.com/designbridge/caddy-designbridge/design"
)

func ExampleDecode() {
	d, err := design.Decode([]byte(`{"page":{
		"body":{"content":{"computedStyle":{"messageWidth":"640px"}}},
		"rows":[{"columns":[{"grid-columns":12,"modules":[
			{"type":"mailup-bee-newsletter-modules-image",
			 "descriptor":{"image":{"src":"https://x.test/a.png","href":"{{link}}"},"computedStyle":{"width":338.5}}}]}]}]}}`))
	if err != nil {
		panic(err)
	}
	m := &d.Page.Rows[0].Columns[0].Modules[0]
	w, _ := m.Computed.Px("width")
	fmt.Println(d.Page.Body.Width, m.Kind, m.Descriptor.At("image", "src").Text(), w)

	_, err = design.Decode([]byte(`{"page":{"rows":[{"columns":{}}]}}`))
	var pe *design.PathError
	fmt.Println(errors.As(err, &pe), pe.Path)
	// Output:
	// 640 image https://x.test/a.png 338.5
	// true page.rows[0].columns
}
