-- The tables DS3 adds to DS2: premium membership, reviews and their helpfulness ratings.
CREATE TABLE membership (
    customerid     integer NOT NULL,
    membershiptype integer NOT NULL,
    expiredate     date NOT NULL
);

CREATE TABLE reviews (
    review_id      serial NOT NULL,
    prod_id        integer NOT NULL,
    review_date    date NOT NULL,
    stars          smallint NOT NULL,
    customerid     integer NOT NULL,
    review_summary text NOT NULL,
    review_text    text
);

CREATE TABLE reviews_helpfulness (
    review_helpfulness_id serial NOT NULL,
    review_id             integer NOT NULL,
    customerid            integer NOT NULL,
    helpfulness           smallint NOT NULL
);
