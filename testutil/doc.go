// Package testutil holds nothing itself: its sub-packages (configtest,
// conntest, designtest, imagebomb, inventory, proccpu, testimage) are helpers for
// the project's tests and benchmarks only. No product package imports
// them.
package testutil
