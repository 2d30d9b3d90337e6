"""The socket side: listening, accepting, connections, dispatch and their bounds."""
