fn main() {
    leasedesk_app::run()
}
