//! RAG retrieval measures (UDCG, UDCGθ, eRAG) and their formats.
