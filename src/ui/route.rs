//! The app's pages as hash routes (`#/`, `#/judges`, `#/learn/...`): any static host serves
//! them (the path never changes, so no server rewrite is needed) and the browser's history
//! gives back/forward for free.

/// One page per route.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Route {
    /// Scores, per query, distribution, topics and RAG views of the loaded files.
    #[default]
    Evaluate,
    /// Remote LLM judges (UMBRELA relevance now).
    Judges,
    /// Teaching pages; holds what follows `#/learn/` (empty for the index).
    Learn(String),
}

impl Route {
    /// The route of a `location.hash` (`#/judges`); anything unknown is the Evaluate page, so an
    /// old or mistyped link still opens the app.
    pub fn from_hash(hash: &str) -> Route {
        let path = hash.trim_start_matches('#').trim_start_matches('/');
        let (head, rest) = match path.split_once('/') {
            Some((h, r)) => (h, r),
            None => (path, ""),
        };
        // A query after the page name (`#/judges?x`) belongs to the page, not to the route.
        let head = head.split('?').next().unwrap_or("");
        match head {
            "judges" => Route::Judges,
            "learn" => Route::Learn(rest.to_string()),
            _ => Route::Evaluate,
        }
    }

    /// The fragment to link to (with its `#`).
    pub fn hash(&self) -> String {
        match self {
            Route::Evaluate => "#/".into(),
            Route::Judges => "#/judges".into(),
            Route::Learn(page) if page.is_empty() => "#/learn".into(),
            Route::Learn(page) => format!("#/learn/{page}"),
        }
    }

    /// The header entry this route belongs to.
    pub fn section(&self) -> Section {
        match self {
            Route::Evaluate => Section::Evaluate,
            Route::Judges => Section::Judges,
            Route::Learn(_) => Section::Learn,
        }
    }
}

/// The entries of the header's navigation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    Evaluate,
    Judges,
    Learn,
}

impl Section {
    pub const ALL: [Section; 3] = [Section::Evaluate, Section::Judges, Section::Learn];

    pub fn label(self) -> &'static str {
        match self {
            Section::Evaluate => "Evaluate",
            Section::Judges => "Judges",
            Section::Learn => "Learn",
        }
    }

    pub fn route(self) -> Route {
        match self {
            Section::Evaluate => Route::Evaluate,
            Section::Judges => Route::Judges,
            Section::Learn => Route::Learn(String::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_map_to_pages_and_back() {
        for (hash, route) in [
            ("", Route::Evaluate),
            ("#", Route::Evaluate),
            ("#/", Route::Evaluate),
            ("#/judges", Route::Judges),
            ("#/judges/", Route::Judges),
            ("#/judges?provider=openai", Route::Judges),
            ("#/learn", Route::Learn(String::new())),
            ("#/learn/udcg-vs-ndcg", Route::Learn("udcg-vs-ndcg".into())),
            (
                "#/learn/udcg-vs-ndcg?k=5",
                Route::Learn("udcg-vs-ndcg?k=5".into()),
            ),
            ("#/nowhere", Route::Evaluate),
            ("#results", Route::Evaluate),
        ] {
            assert_eq!(Route::from_hash(hash), route, "{hash:?}");
        }
        for route in [
            Route::Evaluate,
            Route::Judges,
            Route::Learn(String::new()),
            Route::Learn("lost-in-the-middle".into()),
        ] {
            assert_eq!(Route::from_hash(&route.hash()), route);
        }
        assert_eq!(
            Route::Learn("x".into()).section().route(),
            Route::Learn(String::new())
        );
    }
}
