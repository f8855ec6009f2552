package section

// Decoded is a platform's section as its decoder made it: what the rest of the spec must know
// of it, declared as data, and the platform's own typed value, which only a closure of the
// platform holds, so that nothing outside the platform learns its type or asserts it.
type Decoded struct {
	// Clusters are the values the section gives the matrix key cluster besides "none"
	// (kubernetes.clusters), sorted; nil for a section that names none.
	Clusters []string
	// Configure configures the platform whose decoder made this value with it, replacing an
	// earlier configuration; nil when there is nothing to configure.
	Configure func()
}

// Param says what the parameter of a parametric storage value names (an entry of a platform's
// storages ending in ':': "pvc:" is followed by a StorageClass name), for the problem a bare
// prefix gets: `"pvc:" needs a StorageClass name (valid: e.g. pvc:standard)`.
type Param struct {
	What    string // "StorageClass name"
	Example string // "standard"
}
