"""`python -m bench.peers`: the loop against real llama.cpp servers (see `bench.peers.run`)."""
