import Hummingbird

/// `/api/sounds`: the user's enrolled sounds, as `earshot sounds list` shows them.
struct SoundsController {
    let sounds: SoundStore

    func addRoutes(to group: RouterGroup<HubRequestContext>) {
        group.get { _, _ in try sounds.summaries() }
    }
}
