/// What the hub's pages share: the document head with the common style, and the navigation
/// between them. Each page adds its own style and body.
enum HubPage {
    static func head(title: String, style: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(title)</title>
        <style>
          :root { font-family: system-ui, sans-serif; color-scheme: light dark; }
          header { display: flex; align-items: baseline; gap: 1rem; flex-wrap: wrap; }
          header nav { margin-left: auto; }
          h1 { font-size: 1.4rem; margin: 0; }
          .hidden { display: none !important; }
        \(style)</style>
        </head>

        """
    }

    static let navigation = #"<nav><a href="/">Events</a> · <a href="/hearing-test">Hearing test</a> · <a href="/soundcheck">Sound check</a></nav>"#
}
