"""The ground truth: evaluating configurations on the model, every θ of Θ (`compute`, sharded by
`shards`, checked against `golden`) or on demand (`live`), the inference costs under early
stopping (`inferences`), and generated tables of known structure (`synthetic`)."""
