package intent

// ParseFastYAML is parseFastYAML for the external benchmarks.
var ParseFastYAML = parseFastYAML
