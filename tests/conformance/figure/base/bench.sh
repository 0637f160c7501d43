# The benchmark of the conformance suite's smallest code base: prints the
# figure its one changeable file holds.
echo "figure: $(cat lib/value.txt)"
