package fakeserver

// A defect or variant that only changes what the server writes (a member
// renamed, a header dropped, another status) is a row of a rewrite table:
// the switch it belongs to and a function that changes one output value on
// its way out. The tables sit beside the code that writes the value
// (answerHeadRewrites, eventRewrites, ...), each in the order its rows
// apply, and a switch that is off costs a look at one bool.

// switchID names one switch, a defect or a variant.
type switchID interface {
	// on reports whether the switch is on in set.
	on(set *switchSet) bool
}

func (d defectID) on(set *switchSet) bool  { return set.defects[d] }
func (v variantID) on(set *switchSet) bool { return set.variants[v] }

// rewrite is one row of a rewrite table: while when is on, f changes the
// output value (a pointer to it, or a map) in place.
type rewrite[T any] struct {
	when switchID
	f    func(T)
}

// anyOn reports whether a row of table is on in set.
func anyOn[T any](set *switchSet, table []rewrite[T]) bool {
	if set.none {
		return false
	}
	for _, row := range table {
		if row.when.on(set) {
			return true
		}
	}
	return false
}

// rewriteIn applies, in order, the rows of table that are on in set to x,
// a pointer or a map.
func rewriteIn[T any](set *switchSet, table []rewrite[T], x T) {
	if set.none {
		return
	}
	for _, row := range table {
		if row.when.on(set) {
			row.f(x)
		}
	}
}

// rewritten returns x as the rows of table that are on in set leave it. x
// is copied to the heap only when a row is on: the rows' functions are not
// known to the compiler, so a value they can change has to live there.
func rewritten[T any](set *switchSet, table []rewrite[*T], x T) T {
	if !anyOn(set, table) {
		return x
	}
	p := new(T)
	*p = x
	rewriteIn(set, table, p)
	return *p
}
