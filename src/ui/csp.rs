//! Whether the page's Content-Security-Policy lets the judge worker reach a URL, so the Judges
//! panel can say "rebuild with RAGSCOPE_JUDGE_ORIGINS=..." instead of a bare "Failed to fetch"
//! (a browser does not tell a script that CSP blocked its request).

/// `(scheme, host, port)` of an absolute http(s) URL, the port defaulted by the scheme.
fn origin_of(url: &str) -> Option<(String, String, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit('@').next()?;
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => {
            (h, Some(p.parse::<u16>().ok()?))
        }
        _ => (authority, None),
    };
    let default = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    Some((scheme, host.to_ascii_lowercase(), port.unwrap_or(default)))
}

/// The sources of `directive` (falling back to `default-src`), or `None` when the policy sets
/// neither (then anything is allowed).
fn sources<'a>(policy: &'a str, directive: &str) -> Option<Vec<&'a str>> {
    let find = |name: &str| {
        policy.split(';').find_map(|d| {
            let mut parts = d.split_whitespace();
            (parts.next()?.eq_ignore_ascii_case(name)).then(|| parts.collect::<Vec<_>>())
        })
    };
    find(directive).or_else(|| find("default-src"))
}

fn source_matches(source: &str, page: &str, target: &(String, String, u16)) -> bool {
    let (scheme, host, port) = target;
    match source {
        "'self'" => origin_of(page).as_ref() == Some(target),
        "*" => true,
        "'none'" => false,
        s if s.ends_with(':') && !s.contains('/') => s[..s.len() - 1].eq_ignore_ascii_case(scheme),
        s => {
            let (s_scheme, rest) = match s.split_once("://") {
                Some((sc, r)) => (Some(sc.to_ascii_lowercase()), r),
                None => (None, s),
            };
            if let Some(sc) = &s_scheme {
                // http: sources also allow https (CSP3's upgrade rule).
                if !(sc == scheme || (sc == "http" && scheme == "https")) {
                    return false;
                }
            }
            let authority = rest.split('/').next().unwrap_or(rest);
            let (s_host, s_port) = match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            };
            let host_ok = match s_host.strip_prefix("*.") {
                Some(suffix) => host.ends_with(&format!(".{}", suffix.to_ascii_lowercase())),
                None => s_host.eq_ignore_ascii_case(host),
            };
            let port_ok = match s_port {
                Some("*") => true,
                Some(p) => p.parse::<u16>().ok() == Some(*port),
                None => {
                    let sc = s_scheme.as_deref().unwrap_or(scheme);
                    *port == if sc == "https" { 443 } else { 80 }
                        || (sc == "http" && scheme == "https" && *port == 443)
                }
            };
            host_ok && port_ok
        }
    }
}

/// Whether `connect-src` of `policy` (on a page at `page_url`) allows fetching `url`.
pub fn connect_allowed(policy: &str, page_url: &str, url: &str) -> bool {
    let Some(target) = origin_of(url) else {
        return false;
    };
    match sources(policy, "connect-src") {
        None => true,
        Some(list) => list.iter().any(|s| source_matches(s, page_url, &target)),
    }
}

/// The origin of `url` as `RAGSCOPE_JUDGE_ORIGINS` wants it (`https://host[:port]`).
pub fn origin_text(url: &str) -> String {
    match origin_of(url) {
        Some((s, h, p)) if (s == "https" && p == 443) || (s == "http" && p == 80) => {
            format!("{s}://{h}")
        }
        Some((s, h, p)) => format!("{s}://{h}:{p}"),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The policy the default build ships (www/build/post-build.mjs).
    const BUILT: &str =
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self' \
        https://api.anthropic.com https://generativelanguage.googleapis.com https://api.openai.com \
        http://localhost:* http://127.0.0.1:*; worker-src 'self' blob:";
    const PAGE: &str = "https://ragscope.example/app/#/judges";

    #[test]
    fn the_default_build_allows_the_providers_and_local_servers_only() {
        for url in [
            "https://api.anthropic.com/v1/messages",
            "https://generativelanguage.googleapis.com/v1beta/models/x:generateContent",
            "https://api.openai.com/v1/chat/completions",
            "http://localhost:11434/v1/chat/completions",
            "http://127.0.0.1:8000/v1",
            "https://ragscope.example/other",
        ] {
            assert!(connect_allowed(BUILT, PAGE, url), "{url}");
        }
        for url in [
            "https://api.openai.com.evil.example/v1",
            "https://llm.example.org/v1",
            "http://10.0.0.5:8000/v1",
            "https://api.anthropic.com:8443/v1",
            "ftp://127.0.0.1/x",
            "not a url",
        ] {
            assert!(!connect_allowed(BUILT, PAGE, url), "{url}");
        }
        assert!(connect_allowed(
            "default-src 'self'",
            "http://127.0.0.1:8080/",
            "http://127.0.0.1:8080/x"
        ));
        assert!(!connect_allowed(
            "default-src 'self'",
            "http://127.0.0.1:8080/",
            "http://127.0.0.1:9/x"
        ));
        assert!(connect_allowed(
            "img-src 'self'",
            PAGE,
            "https://anything.example/"
        ));
        assert!(connect_allowed(
            "connect-src *.example.org",
            PAGE,
            "https://llm.example.org/v1"
        ));
        assert_eq!(
            origin_text("https://llm.example.org/v1"),
            "https://llm.example.org"
        );
        assert_eq!(
            origin_text("http://10.0.0.5:8000/v1"),
            "http://10.0.0.5:8000"
        );
    }
}
