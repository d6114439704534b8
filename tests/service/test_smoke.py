from post_office import Player, PostOffice


def test_invite_accept_and_first_moves(config):
    office = PostOffice(config)
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    anna.write("invite ben@example.org")
    print(ben.last.as_string())
    ben.reply("accept")
    for mail in office.collect():
        pass
    print(anna.last.get_body(("plain",)).get_content())
    print(ben.last.get_body(("plain",)).get_content())
