// Placeholder so einfer_models has a translation unit until the first architecture lands.
namespace einfer {
int models_placeholder() { return 0; }
}  // namespace einfer
