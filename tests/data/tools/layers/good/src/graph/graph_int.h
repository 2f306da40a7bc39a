/* fixture: the state level */
